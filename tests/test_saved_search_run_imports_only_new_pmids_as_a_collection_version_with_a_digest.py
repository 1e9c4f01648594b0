"""A saved search's runs, each step as the worker runs it (in this process), against the replay
server: the first run makes the collection from the 3 PMIDs PubMed lists, the model classifies
them in a batch and the digest counts the predictions and is e-mailed; the second run finds 5,
imports only the 2 new ones as a new version of the collection (fetching only their page), and
a run that fails (no network, PubMed failing, a malformed page) imports nothing and says why."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core import mail

from classification.batches.services import batch_job_run
from classification.models import BatchJob
from dataset_management.models import Dataset
from dataset_management.selectors import dataset_rows_iter
from literature import runs, services
from literature.models import SavedSearch, SearchRun
from tests.eutils_support import (
    HTTP_500,
    ReplayServer,
    free_port_refused,
    living_review,
    pubmed_settings,
    script_run,
    truncated,
)
from tests.plugins.datasets import media_files

pytestmark = pytest.mark.django_db


@pytest.fixture
def server(settings: Any) -> Iterator[ReplayServer]:
    with ReplayServer() as replay:
        pubmed_settings(settings, replay)
        settings.EMAIL_ENABLED = True
        yield replay


def run_once(search: SavedSearch) -> SearchRun:
    """Start a run and do what the worker does: execute it, classify its batch, then beat's
    maintenance writes the digest."""
    run = services.search_run_start(search=search, user=search.owner)
    runs.search_run_execute(run_id=run.pk)
    run.refresh_from_db()
    if run.batch_id:
        assert batch_job_run(batch_id=run.batch_id) == BatchJob.Status.COMPLETED
        runs.search_runs_maintain()
        run.refresh_from_db()
    return run


def pmids_of(dataset: Dataset) -> list[str]:
    return [row["identifiers"].get("pmid") for row in dataset_rows_iter(dataset=dataset)]


def test_two_runs_import_only_new_pmids_and_digest_their_predictions(
        server: ReplayServer, user: Any, media_root: Path, tfidf_artifact: dict[str, Any],
) -> None:
    search = living_review(user, tfidf_artifact)
    server.play(script_run("esearch_run1.xml"))
    first = run_once(search)
    assert first.status == SearchRun.Status.COMPLETED, first.reason
    assert (first.found, first.new, first.imported) == (3, 3, 3)
    assert first.pmids == ["11748933", "11700088", "27797938"]
    search.refresh_from_db()
    assert search.collection == first.dataset
    assert search.last_status == "completed"
    assert pmids_of(first.dataset) == first.pmids
    assert first.dataset.label_names == []
    assert first.dataset.report["saved_search"]["source_dataset_id"] is None
    predicted = {item["pmid"]: item["predicted_labels"] for item in first.digest_items}
    assert set(predicted) == set(first.pmids)
    assert "oncological" in predicted["27797938"]  # the pancreatic cancer abstract
    counts = first.predicted_counts
    assert counts["oncological"] >= 1
    assert first.digest.startswith("3 new articles; ")
    assert f"{counts['oncological']} predicted oncological" in first.digest
    assert len(mail.outbox) == 1
    assert mail.outbox[0].to == [user.email]
    assert first.digest in mail.outbox[0].body
    assert "https://pubmed.ncbi.nlm.nih.gov/27797938/" in mail.outbox[0].body
    assert first.emailed_to == user.email

    server.play(script_run("esearch_run2.xml"))
    second = run_once(search)
    assert second.status == SearchRun.Status.COMPLETED, second.reason
    assert (second.found, second.new, second.imported) == (5, 2, 2)
    assert second.pmids == ["12091962", "9997"]
    assert [r.params["retstart"] for r in server.calls("efetch.fcgi")] == ["0"]
    assert pmids_of(second.dataset) == first.pmids + second.pmids
    assert second.dataset.report["saved_search"]["source_dataset_id"] == first.dataset.pk
    search.refresh_from_db()
    assert search.collection == second.dataset
    assert [item["pmid"] for item in second.digest_items] == ["12091962", "9997"]
    assert second.digest.startswith("2 new articles; ")

    server.play(script_run("esearch_run2.xml"))
    third = run_once(search)
    assert (third.status, third.new, third.dataset) == ("completed", 0, None)
    assert third.digest == "No new articles since the last run."
    assert server.calls("efetch.fcgi") == []
    assert len(mail.outbox) == 2  # nothing new: no e-mail


def test_a_search_without_a_model_imports_and_says_it_did_not_classify(
        server: ReplayServer, user: Any, media_root: Path, tfidf_artifact: dict[str, Any],
) -> None:
    search = living_review(user, tfidf_artifact)
    services.saved_search_update(user=user, search=search, ml_model=None)
    server.play(script_run("esearch_run1.xml"))
    run = run_once(search)
    assert run.status == "completed"
    assert run.batch is None
    assert run.digest == "3 new articles (not classified: no model chosen)"
    assert all(item["predicted_labels"] is None for item in run.digest_items)


@pytest.mark.parametrize(("answers", "words"), [
    ({"p0": [HTTP_500]}, "PubMed kept failing on articles 1-2: HTTP 500"),
    ({"p2": [truncated("efetch_pubmed2.xml")]},
     "PubMed's answer for articles 3-4 is not readable PubMed XML"),
])
def test_a_failed_run_imports_nothing_and_says_why(
        server: ReplayServer, user: Any, media_root: Path, tfidf_artifact: dict[str, Any],
        answers: dict[str, Any], words: str,
) -> None:
    search = living_review(user, tfidf_artifact)
    server.play(script_run("esearch_run2.xml", **answers))
    datasets, files = Dataset.objects.count(), media_files()
    run = run_once(search)
    assert run.status == SearchRun.Status.FAILED
    assert run.reason.startswith(words)
    assert run.reason.endswith("Nothing was imported.")
    assert (Dataset.objects.count(), media_files()) == (datasets, files)
    search.refresh_from_db()
    assert (search.last_status, search.reason, search.collection) == ("failed", run.reason, None)


def test_without_a_network_the_run_fails_at_once_with_the_reason(
        settings: Any, user: Any, media_root: Path, tfidf_artifact: dict[str, Any],
) -> None:
    settings.PUBMED_BASE_URL = free_port_refused()
    search = living_review(user, tfidf_artifact)
    run = run_once(search)
    assert run.status == SearchRun.Status.FAILED
    assert run.reason.startswith("PubMed cannot be reached from this server")
    assert (run.finished_at - run.started_at).total_seconds() < 2
