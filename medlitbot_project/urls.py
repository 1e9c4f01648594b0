from django.conf import settings
from django.contrib import admin
from django.urls import include, path

from api import token_views
from web.views import dashboard

urlpatterns = [
    path("", dashboard, name="dashboard"),
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("datasets/", include("dataset_management.urls")),
    path("", include("classification.urls")),
    path("", include("core.urls")),
    path("screening/", include("screening.urls")),
    path("literature/", include("literature.urls")),
    path("api/", include("api.urls")),
    path("account/tokens/", token_views.token_page, name="account_tokens"),
    path("account/tokens/<int:pk>/revoke/", token_views.token_revoke,
         name="account_token_revoke"),
    path("account/sessions/<int:pk>/end/", token_views.session_end, name="account_session_end"),
    path("projects/<int:pk>/members/<int:user_id>/revoke-tokens/",
         token_views.member_tokens_revoke, name="project_member_tokens_revoke"),
    path("", include("projects.urls")),
]

if settings.OIDC_ENABLED:  # single sign-on, on only when OIDC_RP_CLIENT_ID is set (settings.py)
    urlpatterns.append(path("oidc/", include("mozilla_django_oidc.urls")))
