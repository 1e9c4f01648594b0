"""The records page of a session: search and filter its records (paged), see and put tags, and
for a maintainer define tags and send a chosen subset back to be screened again.

Thin: reads through screening.record_search and screening.tags, writes through screening.tags
and screening.rescreen, who may do what through projects.policy. A write refused is shown on
the page (400) with what was typed kept; a write done redirects to the same filter.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import path, reverse

from core.paging import page_of
from projects import policy
from projects.context import page_project_show
from screening import record_search, rescreen, selectors, tags, visibility
from screening.errors import ScreeningError
from screening.models import TAG_COLOURS, Decision

PER_PAGE = 50


def _reviewers(*, session: Any) -> list[str]:
    return sorted(set(Decision.objects.filter(record__session=session)
                      .values_list("reviewer__username", flat=True)))


def _context(request: HttpRequest, session: Any, sight: Any,
             filters: dict[str, str]) -> dict[str, Any]:
    error = ""
    try:
        found = record_search.record_search(session=session, sight=sight, **filters)
    except ScreeningError as exc:
        found, error = session.records.none(), str(exc)
    page = page_of(found, request.GET.get("page"), per_page=PER_PAGE)
    by_reviewer = policy.screening_filter_by_reviewer(sight=sight.mode)
    shown = {("q" if key == "text" else key): value for key, value in filters.items()}
    return {
        "session": session, "section": "screening", "page": page, "filters": shown,
        "rows": record_search.record_rows(records=list(page.object_list), sight=sight),
        "filter_error": error, "tags": list(tags.tag_list(session=session)),
        "colours": TAG_COLOURS, "decisions": record_search.DECISIONS,
        "stages": list(record_search.STAGES) if policy.screening_filter_by_stage(
            sight=sight.mode) else [],
        "reviewers": _reviewers(session=session) if by_reviewer else [],
        "query": urlencode(shown), "can": policy.actions_on(user=request.user, obj=session),
        "outcomes_shown": policy.screening_outcomes_shown(sight=sight.mode)}


def _write(request: HttpRequest, session: Any, sight: Any, filters: dict[str, str]) -> str:
    """Do the POSTed action; the message to show. ScreeningError says what is wrong."""
    data, user = request.POST, request.user
    action = data.get("action", "")
    if action == "define":
        tag = tags.tag_define(user=user, session=session, name=data.get("name", ""),
                              colour=data.get("colour", ""))
        return f"Tag “{tag.name}” defined."
    if action in ("tag", "untag"):
        record = selectors.record_get(user=user, session=session, pk=data.get("record"))
        tag = tags.tag_get(session=session, name=data.get("tag", ""))
        if action == "tag":
            tags.record_tag_put(user=user, record=record, tag=tag)
            return f"Tagged record {record.position + 1} “{tag.name}”."
        tags.record_tag_remove(user=user, record=record, tag=tag,
                               tagged_by=data.get("tagged_by", ""))
        return f"Took “{tag.name}” off record {record.position + 1}."
    if action == "rescreen":
        policy.require(user=user, action=policy.Action.RESCREEN, obj=session)
        if data.get("scope") == "filter":
            ids = list(record_search.record_search(session=session, sight=sight, **filters)
                       .values_list("pk", flat=True))
        else:
            ids = [int(pk) for pk in data.getlist("record_ids") if pk.isdigit()]
        done = rescreen.records_rescreen(user=user, session=session, record_ids=ids,
                                         reason=data.get("reason", ""))
        return f"{done.record_count} record(s) sent back to title/abstract screening."
    raise ScreeningError("Unknown action.")


@login_required
def records_page(request: HttpRequest, pk: int) -> HttpResponse:
    session = selectors.session_get(user=request.user, pk=pk)
    page_project_show(request=request, project_id=session.project_id)
    sight = visibility.session_sight(user=request.user, session=session)
    filters = record_search.search_filters(request.GET)
    if request.method == "POST":
        try:
            messages.success(request, _write(request, session, sight, filters))
        except ScreeningError as exc:
            context = _context(request, session, sight, filters)
            return render(request, "screening/records.html", {
                **context, "write_error": str(exc), "posted": request.POST}, status=400)
        query = request.GET.urlencode()
        return redirect(reverse("screening:records", args=[session.pk])
                        + (f"?{query}" if query else ""))
    context = _context(request, session, sight, filters)
    return render(request, "screening/records.html", context,
                  status=400 if context["filter_error"] else 200)


urlpatterns = [path("<int:pk>/records/", records_page, name="records")]
