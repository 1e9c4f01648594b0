from django.urls import path

from literature import views

app_name = "literature"

urlpatterns = [
    path("", views.search_list, name="list"),
    path("searches/<int:pk>/", views.search_detail, name="detail"),
    path("searches/<int:pk>/run/", views.search_run, name="run"),
    path("searches/<int:pk>/delete/", views.search_delete, name="delete"),
    path("runs/<int:pk>/", views.run_detail, name="run_detail"),
]
