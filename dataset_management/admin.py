from django.contrib import admin

from dataset_management.models import Dataset


@admin.register(Dataset)
class DatasetAdmin(admin.ModelAdmin):
    list_display = (
        "id", "name", "owner", "file_format", "row_count", "is_multilabel", "created_at",
    )
    list_filter = ("file_format", "is_multilabel")
    search_fields = ("name", "original_filename", "content_hash")
    readonly_fields = ("content_hash", "rows_path", "report", "created_at", "updated_at")
