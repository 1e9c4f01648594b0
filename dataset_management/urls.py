from django.urls import path

from dataset_management import views

app_name = "datasets"
urlpatterns = [
    path("", views.dataset_list, name="list"),
    path("upload/", views.dataset_upload, name="upload"),
    path("upload/confirm/", views.dataset_upload_confirm, name="upload_confirm"),
    path("<int:pk>/", views.dataset_detail, name="detail"),
    path("<int:pk>/delete/", views.dataset_delete, name="delete"),
    path("<int:pk>/move/", views.dataset_move, name="move"),
    path("<int:pk>/export/", views.dataset_export, name="export"),
    path("<int:pk>/conflicts/", views.dataset_conflicts, name="conflicts"),
    path("<int:pk>/resolve-conflicts/", views.dataset_resolve_conflicts,
         name="resolve_conflicts"),
]
