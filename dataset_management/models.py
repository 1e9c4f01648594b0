from typing import Any

from django.conf import settings
from django.db import models


def dataset_upload_path(instance: "Dataset", filename: str) -> str:
    # Stored under its content hash: the same bytes are the same file, whatever the user called it.
    suffix = filename.rsplit(".", 1)[-1].lower() if "." in filename else "bin"
    return f"datasets/{instance.content_hash}/original.{suffix}"


class Dataset(models.Model):
    """A labelled (or unlabelled) set of articles, parsed once at import.

    The parsed rows live in a Parquet file (`rows_path`) that feeds `datasets` directly; the
    import that creates this row writes that file first and deletes it if the row cannot be saved.
    """

    class Format(models.TextChoices):
        CSV = "csv", "CSV"
        TSV = "tsv", "TSV"
        XLSX = "xlsx", "Excel (XLSX)"
        JSON = "json", "JSON"
        JSONL = "jsonl", "JSON Lines"
        RIS = "ris", "RIS"
        NBIB = "nbib", "PubMed MEDLINE"

    PROJECT_LOOKUP = "project"

    # PROTECT: a project is deleted only once its rows are moved or deleted (projects/services).
    project = models.ForeignKey(
        "projects.Project", on_delete=models.PROTECT, related_name="datasets"
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="datasets", null=True
    )
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    original_file = models.FileField(upload_to=dataset_upload_path, max_length=500, blank=True)
    original_filename = models.CharField(max_length=255, blank=True)
    content_hash = models.CharField(max_length=64, db_index=True, blank=True)
    file_format = models.CharField(max_length=10, choices=Format.choices, blank=True)
    encoding = models.CharField(max_length=40, blank=True)
    rows_path = models.CharField(max_length=500, blank=True)
    text_fields = models.JSONField(default=list, blank=True)
    label_field = models.CharField(max_length=200, blank=True)
    label_names = models.JSONField(default=list, blank=True)
    is_multilabel = models.BooleanField(default=False)
    row_count = models.PositiveIntegerField(default=0)
    label_counts = models.JSONField(default=dict, blank=True)
    split_seed = models.IntegerField(default=42)
    split_ratios = models.JSONField(default=dict, blank=True)
    split_sizes = models.JSONField(default=dict, blank=True)
    report = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["project", "-created_at"])]

    def __str__(self) -> str:
        return self.name

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.project_id is None:
            from projects.services import project_personal_id

            self.project_id = project_personal_id(user_id=self.owner_id)
        super().save(*args, **kwargs)

    @property
    def is_labelled(self) -> bool:
        return bool(self.label_names)

    @property
    def is_trainable(self) -> bool:
        return len(self.label_names) >= 2
