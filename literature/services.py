"""Writes for saved searches: create, change, delete, start a run (on demand or when beat finds
it due). What a run does on the worker is literature/runs.py.

Every door (page, API, beat) comes through here, so the checks and the refusals are the same:
SavedSearchError (a ValueError) carries the person's message, projects.policy's RoleRequired
the role's.
"""

from __future__ import annotations

import calendar
import logging
import uuid
from datetime import date, datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from classification.models import MLModel
from core.queueing import task_send_on_commit
from dataset_management.models import Dataset
from literature.models import SavedSearch, SearchRun
from projects import policy
from projects.services import activity_record

logger = logging.getLogger(__name__)

RUN_TASK = "literature.tasks.search_run_execute"
MAX_QUERY_CHARS = 4000
S = SearchRun.Status
FIELDS = ("name", "query", "mindate", "maxdate", "collection", "ml_model", "schedule")


class SavedSearchError(ValueError):
    """The request cannot be a saved search or a run; `field` names the field at fault."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message, self.field = message, field


def _who(user: Any) -> str:
    return user.get_username() if user is not None else "The schedule"


def _clean(*, project_id: int, values: dict[str, Any]) -> dict[str, Any]:
    name = (values.get("name") or "").strip()
    query = (values.get("query") or "").strip()
    if not name:
        raise SavedSearchError("Give the search a name.", field="name")
    if not query:
        raise SavedSearchError("Give a PubMed query, e.g. “pancreatic cancer[tiab] AND "
                               "telomere*”.", field="query")
    if len(query) > MAX_QUERY_CHARS or "\x00" in query:
        raise SavedSearchError(f"The query is over {MAX_QUERY_CHARS:,} characters or holds a "
                               "NUL character.", field="query")
    mindate, maxdate = values.get("mindate"), values.get("maxdate")
    for field, value in (("mindate", mindate), ("maxdate", maxdate)):
        if value is not None and not isinstance(value, date):
            raise SavedSearchError("Dates are YYYY-MM-DD.", field=field)
    if mindate and maxdate and mindate > maxdate:
        raise SavedSearchError("The earliest publication date is after the latest.",
                               field="maxdate")
    schedule = values.get("schedule") or SavedSearch.Schedule.OFF
    if schedule not in SavedSearch.Schedule.values:
        raise SavedSearchError(f"Schedule must be one of {', '.join(SavedSearch.Schedule.values)}"
                               f", not “{schedule}”.", field="schedule")
    _check_collection(values.get("collection"), project_id=project_id)
    model = values.get("ml_model")
    if model is not None and (not isinstance(model, MLModel) or model.project_id != project_id):
        raise SavedSearchError("The model must belong to the search's project.",
                               field="ml_model")
    return {**values, "name": name[:200], "query": query, "schedule": schedule}


def _check_collection(collection: Any, *, project_id: int) -> None:
    if collection is None:
        return
    if not isinstance(collection, Dataset) or collection.project_id != project_id:
        raise SavedSearchError("The collection must be a dataset of the search's project.",
                               field="collection")
    if collection.label_names:
        raise SavedSearchError(
            f"“{collection.name}” is labelled (training data); a search adds unlabelled "
            "articles. Choose an unlabelled collection, or none: the first run makes one.",
            field="collection")


def next_run_after(*, schedule: str, after: datetime) -> datetime | None:
    """When a search on `schedule` is next due after `after` (None when it is off)."""
    if schedule == SavedSearch.Schedule.DAILY:
        return after + timedelta(days=1)
    if schedule == SavedSearch.Schedule.WEEKLY:
        return after + timedelta(days=7)
    if schedule == SavedSearch.Schedule.MONTHLY:
        year, month = (after.year + 1, 1) if after.month == 12 else (after.year, after.month + 1)
        day = min(after.day, calendar.monthrange(year, month)[1])
        return after.replace(year=year, month=month, day=day)
    return None


def saved_search_create(*, user: Any, project: Any, **values: Any) -> SavedSearch:
    """A new saved search in `project`; a scheduled one is due at once (beat's next tick)."""
    project_id = getattr(project, "pk", project)
    policy.require(user=user, action=policy.Action.UPLOAD, project=project_id)
    cleaned = _clean(project_id=project_id, values={k: values.get(k) for k in FIELDS})
    search = SavedSearch(project_id=project_id, owner=user, **cleaned)
    if search.schedule != SavedSearch.Schedule.OFF:
        search.next_run_at = timezone.now()
    with transaction.atomic():
        search.save()
        activity_record(project=project_id, actor=user, verb="saved_search_created",
                        subject=search, summary=f"{_who(user)} saved the PubMed search "
                        f"“{search.name}”", name=search.name)
    return search


def saved_search_update(*, user: Any, search: SavedSearch, **values: Any) -> SavedSearch:
    """Change the fields given; a new schedule counts from now."""
    policy.require(user=user, action=policy.Action.UPLOAD, obj=search)
    merged = {k: values[k] if k in values else getattr(search, k) for k in FIELDS}
    cleaned = _clean(project_id=search.project_id, values=merged)
    schedule_changed = cleaned["schedule"] != search.schedule
    for key, value in cleaned.items():
        setattr(search, key, value)
    if search.owner_id is None:  # its owner left: whoever saves it runs it from now on
        search.owner = user
    if schedule_changed:
        search.next_run_at = (timezone.now() if search.schedule != SavedSearch.Schedule.OFF
                              else None)
    search.save()
    return search


def saved_search_delete(*, user: Any, search: SavedSearch) -> None:
    """Delete the search and its runs' records; the collection and its versions stay."""
    policy.require(user=user, action=policy.Action.DELETE, obj=search)
    if search.runs.filter(status__in=SearchRun.SEARCHING_STATUSES).exists():
        raise SavedSearchError("The search is running; delete it once the run has ended.")
    with transaction.atomic():
        activity_record(project=search.project_id, actor=user, verb="saved_search_deleted",
                        subject=search, summary=f"{_who(user)} deleted the PubMed search "
                        f"“{search.name}”", name=search.name)
        search.delete()


def search_run_start(*, search: SavedSearch, user: Any = None,
                     trigger: str = SearchRun.Trigger.MANUAL) -> SearchRun:
    """A queued run, sent to the default queue once it commits.

    `user` None is the schedule, which runs as the search's owner. SavedSearchError when a run
    of this search is already queued or searching; QueueUnavailable when the broker refuses (the
    run is then failed with the reason).
    """
    actor = user if user is not None else search.owner
    policy.require(user=actor, action=policy.Action.UPLOAD, obj=search)
    run = SearchRun(search=search, trigger=trigger, requested_by=user, query=search.query,
                    celery_task_id=str(uuid.uuid4()))
    try:
        with transaction.atomic():
            run.save(force_insert=True)
            activity_record(project=search.project_id, actor=user, verb="saved_search_run",
                            subject=search, summary=f"{_who(user)} ran the PubMed search "
                            f"“{search.name}”", name=search.name, run=run.pk)
            _send_on_commit(run)
    except IntegrityError:
        raise SavedSearchError("This search is already running; wait for its run to end.") \
            from None
    return run


def _send_on_commit(run: SearchRun) -> None:
    run_id = run.pk

    def unreachable(reason: str) -> None:
        search_run_fail(run_id=run_id, source=S.QUEUED, reason=reason)

    task_send_on_commit(name=RUN_TASK, args=(run_id,), task_id=run.celery_task_id,
                        on_unreachable=unreachable)


def search_run_fail(*, run_id: int, source: str, reason: str,
                    silent_before: datetime | None = None) -> bool:
    """End a run as failed (from `source`), and say so on its search.

    `silent_before` (the maintenance sweep's): only if the run's last heartbeat is still older,
    checked in the same UPDATE, so a worker that wrote one since the sweep read the run keeps it.
    """
    now = timezone.now()
    rows = (SearchRun.objects.filter(updated_at__lt=silent_before) if silent_before
            else SearchRun.objects.all())
    if not rows.transition(run_id, source=source, target=S.FAILED, reason=reason,
                           finished_at=now):
        return False
    search_id = SearchRun.objects.filter(pk=run_id).values_list("search_id", flat=True).first()
    SavedSearch.objects.filter(pk=search_id).update(last_status=S.FAILED, reason=reason,
                                                    last_run_at=now)
    return True


def saved_searches_start_due(*, now: datetime | None = None) -> list[int]:
    """Beat's part: start every scheduled search whose time has come; the run ids started.

    Each search is claimed by moving its next_run_at with a conditional UPDATE, so two ticks
    (two beats by mistake) never start it twice. One whose owner may no longer import there,
    or that is still running, gets no run this time, and its reason says why.
    """
    from literature.selectors import searches_due

    now = now or timezone.now()
    started: list[int] = []
    for search in searches_due(now=now).select_related("owner"):
        due = search.next_run_at
        following = due
        while following is not None and following <= now:
            following = next_run_after(schedule=search.schedule, after=following)
        if not SavedSearch.objects.filter(pk=search.pk, next_run_at=due).update(
                next_run_at=following):
            continue
        try:
            run = search_run_start(search=search, trigger=SearchRun.Trigger.SCHEDULE)
        except (SavedSearchError, policy.RoleRequired) as exc:
            reason = getattr(exc, "message", str(exc))
            if search.owner is None:
                reason = "The search's owner is gone; open it and save it to take it over."
            SavedSearch.objects.filter(pk=search.pk).update(reason=f"Not run on schedule: "
                                                            f"{reason}")
            continue
        started.append(run.pk)
    return started
