"""Maintenance fails a saved-search run whose heartbeat went silent, saying nothing was imported.
When its worker was merely slow and comes back, it notices at its next heartbeat (or when its
import ends) and stops: no new version of the collection, the search still points at the one
it had, no batch. A worker that wrote a heartbeat after the sweep read its run keeps the run."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from classification.batches.services import batch_job_run
from classification.models import BatchJob
from dataset_management.models import Dataset
from literature import runs, services
from literature.eutils import EutilsClient
from literature.models import SavedSearch, SearchRun
from tests.eutils_support import ReplayServer, living_review, pubmed_settings, script_run
from tests.plugins.datasets import media_files

pytestmark = pytest.mark.django_db
S = SearchRun.Status


@pytest.fixture
def server(settings: Any) -> Iterator[ReplayServer]:
    with ReplayServer() as replay:
        pubmed_settings(settings, replay)
        yield replay


def reaped_as_stale(run_id: int) -> None:
    """What beat's maintenance does to a run silent for longer than SEARCH_RUN_STALE_SECONDS."""
    SearchRun.objects.filter(pk=run_id).update(updated_at=timezone.now() - timedelta(hours=2))
    assert "1 stale search runs failed" in runs.search_runs_maintain()


@pytest.fixture
def first_version(server: ReplayServer, user: Any, media_root: Path,
                  tfidf_artifact: dict[str, Any]) -> SavedSearch:
    """A search whose first run made the collection, its batch run: the second run's start."""
    search = living_review(user, tfidf_artifact)
    server.play(script_run("esearch_run1.xml"))
    run = services.search_run_start(search=search, user=user)
    runs.search_run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert batch_job_run(batch_id=run.batch_id) == BatchJob.Status.COMPLETED
    runs.search_runs_maintain()
    search.refresh_from_db()
    assert search.collection == run.dataset
    server.play(script_run("esearch_run2.xml"))  # two new PMIDs for the next run
    return search


def second_run_fails_back(search: SavedSearch) -> SearchRun:
    before = (Dataset.objects.count(), BatchJob.objects.count())
    run = services.search_run_start(search=search, user=search.owner)
    runs.search_run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == S.FAILED
    assert run.reason == runs.STALE_REASON
    assert run.dataset is None
    assert (Dataset.objects.count(), BatchJob.objects.count()) == before
    return run


def test_a_run_failed_during_its_fetch_stops_at_its_next_heartbeat(
        first_version: SavedSearch, monkeypatch: pytest.MonkeyPatch,
) -> None:
    collection = first_version.collection
    fetch = EutilsClient.articles

    def articles_with_a_stall(self: EutilsClient, *, progress: Callable[[int, int], None],
                              **kwargs: Any) -> list[dict[str, Any]]:
        def late_progress(done: int, total: int) -> None:
            if done == 1:  # the worker was slow before this page: the sweep got there first
                reaped_as_stale(SearchRun.objects.get(status=S.RUNNING).pk)
            progress(done, total)

        return fetch(self, progress=late_progress, **kwargs)

    monkeypatch.setattr(EutilsClient, "articles", articles_with_a_stall)
    files = media_files()

    run = second_run_fails_back(first_version)

    assert media_files() == files
    first_version.refresh_from_db()
    assert first_version.collection == collection
    assert (first_version.last_status, first_version.reason) == ("failed", run.reason)


def test_a_run_failed_while_its_version_was_imported_deletes_that_version(
        first_version: SavedSearch, monkeypatch: pytest.MonkeyPatch,
        django_capture_on_commit_callbacks: Any,
) -> None:
    collection = first_version.collection
    create = runs.collection_version_create

    def slow_import(*, run: SearchRun, **kwargs: Any) -> Dataset:
        dataset = create(run=run, **kwargs)
        reaped_as_stale(run.pk)  # the import outlasted SEARCH_RUN_STALE_SECONDS
        return dataset

    monkeypatch.setattr(runs, "collection_version_create", slow_import)
    files = media_files()

    with django_capture_on_commit_callbacks(execute=True):  # the deletion's files go on commit
        second_run_fails_back(first_version)

    assert media_files() == files
    first_version.refresh_from_db()
    assert first_version.collection == collection


def test_the_sweep_leaves_a_run_whose_worker_wrote_a_heartbeat_after_it_read_the_run(
        user: Any, tfidf_artifact: dict[str, Any],
) -> None:
    search = living_review(user, tfidf_artifact)
    run = services.search_run_start(search=search, user=user)
    SearchRun.objects.filter(pk=run.pk).update(status=S.RUNNING)
    silent_before = timezone.now()  # what the sweep read: older than this is stale
    # The worker's heartbeat lands between the sweep's read and its UPDATE.
    SearchRun.objects.filter(pk=run.pk).update(updated_at=timezone.now() + timedelta(seconds=1))

    assert not services.search_run_fail(run_id=run.pk, source=S.RUNNING, reason="stale",
                                        silent_before=silent_before)
    run.refresh_from_db()
    assert run.status == S.RUNNING
