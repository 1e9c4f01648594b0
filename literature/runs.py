"""A run on the worker: ask PubMed, keep the PMIDs the collection lacks, import them as a new
version of the collection, and have the chosen model classify them in a batch; then, once the
batch has ended, the digest (and its e-mail). Maintenance fails runs whose worker died.

Nothing is imported unless every page was read: the articles are gathered first, then one
import saves them all or nothing (literature/importing.py).
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from classification.batches.services import BatchError, batch_job_create_from_records
from classification.models import BatchJob
from core.queueing import QueueUnavailable
from dataset_management.models import Dataset
from dataset_management.readers import DatasetFileError
from dataset_management.services import dataset_delete
from literature import digest, selectors
from literature.eutils import EutilsError
from literature.importing import collection_version_create
from literature.models import SavedSearch, SearchRun
from literature.pubmed import eutils_client, pubmed_parse
from literature.services import saved_searches_start_due, search_run_fail
from projects import policy

logger = logging.getLogger(__name__)

S = SearchRun.Status
BATCH_ENDED = (BatchJob.Status.COMPLETED, BatchJob.Status.FAILED, BatchJob.Status.CANCELLED)
STALE_REASON = ("The worker stopped during the run (killed or restarted) and nothing was "
                "imported by it; run the search again.")
LOST_REASON = ("No worker took the run (its message was lost, or no worker serves the default "
               "queue); nothing was imported. Run the search again.")


class _RunEnded(Exception):
    """The run left `running` under its worker (maintenance failed it as stale while the worker
    was merely slow): the worker stops and creates nothing."""


def search_run_execute(*, run_id: int) -> None:
    """What the task runs: claim the queued run (once), search, import, classify."""
    if not SearchRun.objects.transition(run_id, source=S.QUEUED, target=S.RUNNING,
                                        started_at=timezone.now()):
        return  # a duplicate delivery, or it ended (failed) before a worker took it
    run = SearchRun.objects.select_related("search__collection", "search__ml_model",
                                           "search__owner").get(pk=run_id)
    try:
        _search_and_import(run=run, search=run.search)
    except _RunEnded as exc:
        logger.warning("saved search run %s was ended by maintenance while its worker ran (%s);"
                       " stopping without importing anything", run_id, exc)
    except EutilsError as exc:
        search_run_fail(run_id=run_id, source=S.RUNNING, reason=exc.reason)
    except DatasetFileError as exc:
        search_run_fail(run_id=run_id, source=S.RUNNING, reason=(
            f"The new articles could not be imported: {exc.message} Nothing was imported."))
    except Exception as exc:
        logger.exception("saved search run %s failed", run_id)
        search_run_fail(run_id=run_id, source=S.RUNNING, reason=(
            f"The run failed unexpectedly ({type(exc).__name__}: {exc}); nothing was "
            "imported. The worker's log has the details."))


def _search_and_import(*, run: SearchRun, search: SavedSearch) -> None:
    client = eutils_client()
    result = client.esearch(term=search.query,
                            mindate=search.mindate.strftime("%Y/%m/%d") if search.mindate else "",
                            maxdate=search.maxdate.strftime("%Y/%m/%d") if search.maxdate else "")
    known = (selectors.collection_pmids(dataset=search.collection)
             if search.collection is not None else set())
    new = [pmid for pmid in result.pmids if pmid not in known]
    _still_running(run_id=run.pk, found=result.count, new=len(new), pmids=new,
                   requests=client.requests)
    if not new:
        _complete(run_id=run.pk, source=S.RUNNING, new=0, items=[], counts=None,
                  requests=client.requests)
        return

    def heartbeat(done: int, total: int) -> None:
        _still_running(run_id=run.pk, requests=client.requests)

    articles = client.articles(result=result, wanted=set(new), parse=pubmed_parse(),
                               progress=heartbeat)
    missing = len(new) - len(articles)
    owner = search.owner or run.requested_by
    # The PMIDs fetched by id after the last page wrote no heartbeat: ask once more.
    _still_running(run_id=run.pk, requests=client.requests)
    dataset = collection_version_create(search=search, run=run, articles=articles, owner=owner)
    _collection_repoint(run=run, search=search, dataset=dataset, articles=articles,
                        requests=client.requests)
    note = f"{missing:,} PMIDs PubMed listed but did not return" if missing else ""
    _classify(run=run, search=search, owner=owner, articles=articles, note=note,
              requests=client.requests)


def _still_running(*, run_id: int, **fields: Any) -> None:
    """Write `fields` and a heartbeat while the run is RUNNING; _RunEnded when it is not.

    One conditional UPDATE that must change the row (core/transitions.py's pattern): the
    maintenance step may have failed the run as stale, and its reason promises nothing was
    imported."""
    if not SearchRun.objects.filter(pk=run_id, status=S.RUNNING).update(
            updated_at=timezone.now(), **fields):
        raise _RunEnded("it is no longer running")


def _collection_repoint(*, run: SearchRun, search: SavedSearch, dataset: Dataset,
                        articles: list[dict[str, Any]], requests: int) -> None:
    """Make `dataset` the search's collection, only while the run is still RUNNING.

    The import can be long; a run failed while it ran leaves the new version to no one, so it
    is deleted (the run's reason says nothing was imported) and _RunEnded is raised."""
    before = search.collection.row_count if search.collection is not None else 0
    with transaction.atomic():
        # The run's row first, with a fresh heartbeat: the sweep fails only a run still silent
        # when its own UPDATE runs, so once this commits it leaves the run alone.
        kept = SearchRun.objects.filter(pk=run.pk, status=S.RUNNING).update(
            dataset=dataset, imported=max(0, dataset.row_count - before), new=len(articles),
            pmids=[a["pmid"] for a in articles], requests=requests, updated_at=timezone.now())
        if kept:
            SavedSearch.objects.filter(pk=search.pk).update(collection=dataset)
    if not kept:
        version = dataset.pk
        dataset_delete(dataset=dataset)
        raise _RunEnded(f"it ended while its articles were imported; version {version} "
                        "deleted")


def _classify(*, run: SearchRun, search: SavedSearch, owner: Any,
              articles: list[dict[str, Any]], note: str, requests: int) -> None:
    items = digest.digest_items_plain(articles)
    model = search.ml_model
    if model is None or owner is None:
        _complete(run_id=run.pk, source=S.RUNNING, new=len(articles), items=items, counts=None,
                  note=_join(note, "not classified: no model chosen" if model is None else
                             "not classified: the search has no owner"), requests=requests)
        return
    try:
        batch = batch_job_create_from_records(
            owner=owner, ml_model=model, filename=f"pubmed-search-{search.pk}-run-{run.pk}",
            records=[{"pmid": a.get("pmid", ""), "doi": a.get("doi", ""),
                      "title": a.get("title", ""), "abstract": a.get("abstract", "")}
                     for a in articles])
    except (BatchError, policy.RoleRequired, QueueUnavailable) as exc:
        why = getattr(exc, "message", None) or str(exc)
        _complete(run_id=run.pk, source=S.RUNNING, new=len(articles), items=items, counts=None,
                  note=_join(note, f"not classified with “{model.name}”: {why}"),
                  requests=requests)
        return
    SearchRun.objects.transition(run.pk, source=S.RUNNING, target=S.CLASSIFYING, batch=batch,
                                 digest_items=items, requests=requests,
                                 digest=digest.digest_text(new=len(articles), counts=None,
                                                           note=_join(note, "classifying")))


def _join(*notes: str) -> str:
    return "; ".join(n for n in notes if n)


def _complete(*, run_id: int, source: str, new: int, items: list[dict[str, Any]],
              counts: dict[str, int] | None, note: str = "", requests: int | None = None) -> bool:
    now = timezone.now()
    fields: dict[str, Any] = {"digest": digest.digest_text(new=new, counts=counts, note=note),
                              "digest_items": items, "predicted_counts": counts or {},
                              "finished_at": now}
    if requests is not None:
        fields["requests"] = requests
    if not SearchRun.objects.transition(run_id, source=source, target=S.COMPLETED, **fields):
        return False
    run = SearchRun.objects.select_related("search__owner").get(pk=run_id)
    SavedSearch.objects.filter(pk=run.search_id).update(last_status=S.COMPLETED, reason="",
                                                        last_run_at=now)
    digest.digest_email_send(run=run)
    return True


def search_run_finish(*, run: SearchRun) -> bool:
    """A classifying run whose batch has ended gets its digest; False while the batch runs."""
    batch = run.batch
    if batch is not None and batch.status not in BATCH_ENDED:
        return False
    if batch is not None and batch.status == BatchJob.Status.COMPLETED:
        items, counts = digest.digest_from_batch(batch=batch, items=run.digest_items)
        return _complete(run_id=run.pk, source=S.CLASSIFYING, new=run.new, items=items,
                         counts=counts)
    why = (f"the batch {batch.get_status_display().lower()}: {batch.reason}".rstrip(": ")
           if batch is not None else "its batch was deleted")
    return _complete(run_id=run.pk, source=S.CLASSIFYING, new=run.new, items=run.digest_items,
                     counts=None, note=f"not classified: {why}")


def search_runs_maintain() -> str:
    """Beat's maintenance step: digests for classifying runs whose batch ended, and failed
    runs whose worker died (no heartbeat for SEARCH_RUN_STALE_SECONDS)."""
    finished = sum(search_run_finish(run=run) for run in selectors.runs_classifying())
    before = timezone.now() - timedelta(seconds=settings.SEARCH_RUN_STALE_SECONDS)
    failed = sum(search_run_fail(run_id=run.pk, source=run.status, silent_before=before,
                                 reason=STALE_REASON if run.status == S.RUNNING else LOST_REASON)
                 for run in selectors.runs_stale(before=before))
    done = [f"{finished} search digests" if finished else "",
            f"{failed} stale search runs failed" if failed else ""]
    return ", ".join(d for d in done if d)


def saved_searches_tick() -> str:
    """Celery beat's periodic task: digests for runs whose batch ended, then every scheduled
    search that is due (the maintenance step also does the first, every minute)."""
    maintained = search_runs_maintain()
    started = saved_searches_start_due()
    return ", ".join(d for d in (maintained, f"{len(started)} searches started" if started
                                 else "") if d)
