"""Querysets for the list pages: only the columns a list shows.

A model's `metrics` JSON (per-label tables, confusion matrices, the confident mistakes with
their abstracts) and a dataset's `report` are tens of kilobytes each; a list of 100 rows that
loads them decodes megabytes of JSON to print two numbers. The headline scores are read out
of the JSON by the database instead.
"""

from __future__ import annotations

from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import FloatField, QuerySet
from django.db.models.fields.json import KT
from django.db.models.functions import Cast

from classification.models import MLModel
from dataset_management.models import Dataset

PER_PAGE = 100  # past this a list page is paged, so its render time stops growing with rows
DATASET_LIST_FIELDS = (
    "id", "name", "original_filename", "file_format", "row_count", "label_names",
    "is_multilabel", "created_at",
)


def model_rows(*, owner: Any) -> QuerySet[MLModel]:
    return (
        MLModel.objects.filter(owner=owner)
        .select_related("dataset")
        .only("id", "name", "model_type", "status", "created_at", "dataset__id", "dataset__name")
        .annotate(
            micro_f1=Cast(KT("metrics__micro_f1"), FloatField()),
            macro_f1=Cast(KT("metrics__macro_f1"), FloatField()),
        )
    )


def dataset_rows(*, owner: Any) -> QuerySet[Dataset]:
    return Dataset.objects.filter(owner=owner).only(*DATASET_LIST_FIELDS)


def page_of(queryset: QuerySet, number: str | None) -> Page:
    """One page of a list; a bad or too-high number gives the nearest real page."""
    return Paginator(queryset, PER_PAGE).get_page(number)
