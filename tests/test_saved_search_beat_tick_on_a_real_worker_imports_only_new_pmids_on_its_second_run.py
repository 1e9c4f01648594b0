"""A scheduled search, run the way beat runs it: the test sends beat's own schedule entry
(CELERY_BEAT_SCHEDULE["saved_searches"]) by name, as celery beat does every tick, to a real
worker. The tick starts the due search, the worker searches the replay server, imports the
articles, and the model's batch classifies them; the next tick writes the digest. A day later
(next_run_at moved back) the second scheduled run imports only the two PMIDs that are new."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from celery import current_app
from django.conf import settings
from django.utils import timezone

from literature.models import SavedSearch, SearchRun
from tests.eutils_support import ReplayServer, living_review, script_run
from tests.job_support import fast_env, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.timeout(300)]


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    with ReplayServer() as replay:
        yield replay


def beat_tick() -> None:
    """What celery beat sends for the entry: its task, by name, with its options."""
    entry = settings.CELERY_BEAT_SCHEDULE["saved_searches"]
    current_app.send_task(entry["task"], **entry["options"])


def run_completed(search: SavedSearch, *, count: int) -> SearchRun:
    def done() -> SearchRun | None:
        runs = list(search.runs.order_by("created_at"))
        if len(runs) < count:
            return None
        run = runs[count - 1]
        if run.status == SearchRun.Status.CLASSIFYING and run.batch and run.batch.status in (
                "completed", "failed"):
            beat_tick()  # beat's next tick writes the digest
        return run if run.status in ("completed", "failed") else None

    return wait_for(done, 120, f"scheduled run {count} to end", poll=0.5)


def test_beat_runs_the_due_search_and_its_second_run_imports_only_new_pmids(
        start_worker: Any, server: ReplayServer, user: Any, media_root: Path,
        tfidf_artifact: dict[str, Any],
) -> None:
    worker = start_worker(**fast_env(PUBMED_BASE_URL=server.base_url, PUBMED_PAGE_SIZE="2",
                                     PUBMED_BACKOFF_SECONDS="0.05"))
    assert ". literature.tasks.saved_searches_tick" in worker.log()
    search = living_review(user, tfidf_artifact, schedule=SavedSearch.Schedule.DAILY)
    assert search.next_run_at <= timezone.now()  # a new scheduled search is due at once

    server.play(script_run("esearch_run1.xml"))
    beat_tick()
    first = run_completed(search, count=1)
    assert first.status == "completed", first.reason
    assert (first.trigger, first.new, first.imported) == ("schedule", 3, 3)
    assert first.predicted_counts
    assert first.digest.startswith("3 new articles; ")
    search.refresh_from_db()
    assert search.next_run_at > timezone.now() + timedelta(hours=23)
    beat_tick()  # not due again: no second run
    assert search.runs.count() == 1

    SavedSearch.objects.filter(pk=search.pk).update(
        next_run_at=timezone.now() - timedelta(minutes=1))  # a day has passed
    server.play(script_run("esearch_run2.xml"))
    beat_tick()
    second = run_completed(search, count=2)
    assert second.status == "completed", second.reason
    assert (second.found, second.new, second.imported) == (5, 2, 2)
    assert second.pmids == ["12091962", "9997"]
    assert [r.params["retstart"] for r in server.calls("efetch.fcgi")] == ["0"]
    assert second.dataset.row_count == 5
    assert f"Task literature.tasks.search_run_execute[{second.celery_task_id}]" in worker.log()
