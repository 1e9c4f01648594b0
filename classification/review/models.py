"""Review of a finished batch: people confirm or correct the model's labels, article by article.

Registered through an import at the end of classification/models.py, so they belong to the
classification app (and its migrations).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ReviewItem(models.Model):
    """One article of a batch, as the model labelled it and, once reviewed, as a person did.

    Rows are copied from the batch's result CSV the first time the review is opened: the CSV is
    deleted with the batch after a week, and sorting by uncertainty needs the score in a column.
    ``reviewed_labels`` is None until someone reviews the article; equal to ``predicted_labels``
    when they confirmed it.
    """

    PROJECT_LOOKUP = "batch__project"

    batch = models.ForeignKey(
        "classification.BatchJob", on_delete=models.CASCADE, related_name="review_items"
    )
    row = models.PositiveIntegerField()  # the CSV's "row": 1-based position in the input file
    article_id = models.CharField(max_length=255, blank=True)  # the file's pmid/id/doi, if any
    title = models.TextField(blank=True)
    abstract = models.TextField(blank=True)
    predicted_labels = models.JSONField(default=list)
    probabilities = models.JSONField(default=dict)
    uncertainty = models.FloatField(default=0.0)
    reviewed_labels = models.JSONField(null=True, blank=True)
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
        related_name="review_items",
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        app_label = "classification"
        ordering = ["-uncertainty", "row"]
        constraints = [
            models.UniqueConstraint(fields=["batch", "row"], name="review_item_one_per_row"),
        ]
        indexes = [models.Index(fields=["batch", "-uncertainty", "row"],
                                name="review_item_queue")]

    def __str__(self) -> str:
        return f"Review of row {self.row} in batch {self.batch_id}"

    @property
    def is_reviewed(self) -> bool:
        return self.reviewed_labels is not None

    @property
    def is_confirmed(self) -> bool:
        return self.is_reviewed and set(self.reviewed_labels) == set(self.predicted_labels)


class ReviewRound(models.Model):
    """One turn of the loop: the corrections so far became a dataset, and maybe a new model.

    The dataset and the job outlive the batch's week; this row only links them back to it.
    """

    PROJECT_LOOKUP = "batch__project"

    batch = models.ForeignKey(
        "classification.BatchJob", on_delete=models.CASCADE, related_name="review_rounds"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    dataset = models.ForeignKey(
        "dataset_management.Dataset", on_delete=models.SET_NULL, null=True, related_name="+"
    )
    training_job = models.ForeignKey(
        "classification.TrainingJob", on_delete=models.SET_NULL, null=True, blank=True,
        related_name="+",
    )
    corrections = models.PositiveIntegerField(default=0)  # reviewed articles it includes
    training_rows = models.PositiveIntegerField(default=0)  # rows of the model's own dataset
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "classification"
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"Review round {self.pk} of batch {self.batch_id}"
