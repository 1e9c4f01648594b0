from django.urls import path

from dataset_management import collection_views, duplicate_views, views

app_name = "datasets"
urlpatterns = [
    path("", views.dataset_list, name="list"),
    path("upload/", views.dataset_upload, name="upload"),
    path("upload/confirm/", views.dataset_upload_confirm, name="upload_confirm"),
    path("upload/collection/", collection_views.dataset_upload_collection,
         name="upload_collection"),
    path("imports/<int:pk>/", views.import_detail, name="import_detail"),
    path("imports/<int:pk>/progress/", views.import_progress, name="import_progress"),
    path("imports/<int:pk>/cancel/", views.import_cancel, name="import_cancel"),
    path("<int:pk>/", views.dataset_detail, name="detail"),
    path("<int:pk>/delete/", views.dataset_delete, name="delete"),
    path("<int:pk>/move/", views.dataset_move, name="move"),
    path("<int:pk>/export/", views.dataset_export, name="export"),
    path("<int:pk>/conflicts/", views.dataset_conflicts, name="conflicts"),
    path("<int:pk>/resolve-conflicts/", views.dataset_resolve_conflicts,
         name="resolve_conflicts"),
    path("<int:pk>/add-files/", collection_views.dataset_add_files, name="add_files"),
    path("<int:pk>/near-matches/", collection_views.dataset_near_matches, name="near_matches"),
    path("<int:pk>/near-matches/mark/", duplicate_views.dataset_duplicates_mark,
         name="duplicates_mark"),
    path("<int:pk>/near-matches/undo-merge/", duplicate_views.dataset_merge_undo,
         name="merge_undo"),
]
