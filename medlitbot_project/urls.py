from django.contrib import admin
from django.urls import include, path

from web.views import dashboard

urlpatterns = [
    path("", dashboard, name="dashboard"),
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("datasets/", include("dataset_management.urls")),
    path("", include("classification.urls")),
    path("", include("core.urls")),
    path("api/", include("api.urls")),
]
