"""Reads for saved searches: lists and rows through projects.policy, the collection's PMIDs, the
choices a form offers, and the digests a collection's page shows."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from django.db.models import OuterRef, QuerySet, Subquery

from classification.models import MLModel
from dataset_management.models import Dataset
from dataset_management.selectors import dataset_rows_file
from literature.models import SavedSearch, SearchRun
from projects import policy


def saved_search_list(*, user: Any, project: Any = None) -> QuerySet[SavedSearch]:
    return policy.scope(SavedSearch.objects.select_related("collection", "ml_model"),
                        user=user, project=project)


def saved_search_get(*, user: Any, pk: Any, action: str = policy.Action.VIEW) -> SavedSearch:
    return policy.object_get(SavedSearch.objects.select_related("collection", "ml_model",
                                                                "owner"),
                             user=user, action=action, pk=pk)


def search_run_list(*, search: SavedSearch, limit: int = 50) -> list[SearchRun]:
    return list(search.runs.select_related("dataset", "batch")[:limit])


def search_run_get(*, user: Any, pk: Any) -> SearchRun:
    return policy.object_get(SearchRun.objects.select_related("search", "dataset", "batch"),
                             user=user, pk=pk)


def search_run_latest(*, search: SavedSearch) -> SearchRun | None:
    return search.runs.first()


def search_runs_latest(*, searches: list[SavedSearch]) -> dict[int, SearchRun]:
    """Each search's newest run by search id, in two queries however many searches there
    are (a list shows one per search). Without the PMIDs and digest items, which a list does
    not show and which grow with the articles a run found."""
    newest = (SearchRun.objects.filter(search=OuterRef("pk")).order_by("-created_at", "-pk")
              .values("pk")[:1])
    ids = (SavedSearch.objects.filter(pk__in=[s.pk for s in searches])
           .annotate(latest=Subquery(newest)).values_list("latest", flat=True))
    runs = SearchRun.objects.filter(pk__in=[pk for pk in ids if pk is not None]).defer(
        "pmids", "digest_items")
    return {run.search_id: run for run in runs}


def collection_pmids(*, dataset: Dataset) -> set[str]:
    """Every PMID the collection's rows carry (their `identifiers` column), read column-only."""
    import pyarrow.parquet as pq

    if not dataset.rows_path:
        return set()
    source = pq.ParquetFile(dataset_rows_file(dataset=dataset), pre_buffer=False)
    if "identifiers" not in source.schema_arrow.names:
        return set()
    found: set[str] = set()
    for batch in source.iter_batches(batch_size=50_000, columns=["identifiers"]):
        for value in batch.column(0).to_pylist():
            if value and '"pmid"' in value:
                pmid = json.loads(value).get("pmid")
                if pmid:
                    found.add(str(pmid))
    return found


def collection_choices(*, user: Any, project: Any) -> QuerySet[Dataset]:
    """Unlabelled datasets of the project: a search adds unlabelled articles to one."""
    return (policy.scope(Dataset.objects.all(), user=user, project=project)
            .filter(label_names=[]).order_by("name", "pk"))


def model_choices(*, user: Any, project: Any) -> QuerySet[MLModel]:
    return (policy.scope(MLModel.objects.all(), user=user, project=project)
            .filter(status=MLModel.Status.TRAINED).order_by("name", "pk"))


def dataset_search_runs(*, dataset: Dataset, limit: int = 5) -> list[SearchRun]:
    """The runs that made this dataset version, or whose search feeds it: for its page."""
    runs = SearchRun.objects.filter(dataset=dataset) | SearchRun.objects.filter(
        search__collection=dataset)
    return list(runs.select_related("search").order_by("-created_at", "-pk")[:limit])


def searches_due(*, now: datetime) -> QuerySet[SavedSearch]:
    return (SavedSearch.objects.exclude(schedule=SavedSearch.Schedule.OFF)
            .filter(next_run_at__lte=now).order_by("next_run_at", "pk"))


def runs_stale(*, before: datetime) -> QuerySet[SearchRun]:
    """Runs queued or searching whose last sign of life is older than `before`."""
    return SearchRun.objects.filter(status__in=SearchRun.SEARCHING_STATUSES,
                                    updated_at__lt=before)


def runs_classifying() -> QuerySet[SearchRun]:
    return SearchRun.objects.filter(status=SearchRun.Status.CLASSIFYING).select_related(
        "batch", "search")
