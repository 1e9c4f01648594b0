from django.contrib import admin

from dataset_management.models import Dataset


@admin.register(Dataset)
class DatasetAdmin(admin.ModelAdmin):
    list_display = (
        "id", "name", "project", "owner", "file_format", "row_count", "is_multilabel", "created_at",
    )
    list_filter = ("file_format", "is_multilabel")
    list_select_related = ("project", "owner")
    raw_id_fields = ("owner",)
    search_fields = ("name", "original_filename", "content_hash")
    # The project changes only through dataset_move, which takes the dataset's models along.
    readonly_fields = ("project", "content_hash", "rows_path", "report", "created_at", "updated_at")
