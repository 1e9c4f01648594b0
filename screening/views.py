"""Screening pages and the small JSON endpoints the screening page and the session page poll.

Thin: every read through screening.selectors, every write through screening.services (their
ScreeningError is the person's message), every permission through projects.policy.
"""

from __future__ import annotations

import json
from functools import wraps
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    JsonResponse,
    StreamingHttpResponse,
)
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from classification import selectors as classification_selectors
from dataset_management import selectors as dataset_selectors
from projects import policy
from projects.context import page_project_show
from screening import (
    chart,
    desk,
    export,
    priors_views,
    selectors,
    services,
    simulation_runs,
    skip,
    training,
    visibility,
)
from screening.desk_forms import DeskForm
from screening.forms import SessionForm, SimulationForm

EXPORTS = {"csv": (export.export_csv, "text/csv"), "ris": (export.export_ris,
           "application/x-research-info-systems"),
           "jsonl": (export.export_jsonl, "application/x-ndjson")}
# The record on screen and the saves still queued in the page (a reviewer may run ahead of a
# slow server by a few dozen records).
MAX_EXCLUDED = 200


@login_required
def session_list(request: HttpRequest) -> HttpResponse:
    project = request.project
    form = SessionForm(
        request.POST or None,
        datasets=dataset_selectors.dataset_list(user=request.user, project=project),
        batches=selectors.collection_batches(user=request.user, project=project),
        models=classification_selectors.mlmodel_trained_list(user=request.user, project=project))
    if request.method == "POST" and form.is_valid():
        try:
            session = services.session_create(user=request.user, **form.session_kwargs())
        except services.ScreeningError as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("screening:detail", pk=session.pk)
    sessions = selectors.session_list(user=request.user, project=project)
    return render(request, "screening/list.html", {
        "sessions": sessions, "form": form, "section": "screening",
        "may_create": policy.can(user=request.user, action=policy.Action.MANAGE_SCREENING,
                                 project=project)})


@login_required
@require_GET
def session_detail(request: HttpRequest, pk: int) -> HttpResponse:
    session = selectors.session_get(user=request.user, pk=pk)
    page_project_show(request=request, project_id=session.project_id)
    return render(request, "screening/detail.html", {
        "session": session, "summary": visibility.summary_for(
            user=request.user, session=session,
            summary=selectors.session_summary_for_page(session=session)),
        # While blind only maintainers and owners see the conflicts (screening.visibility).
        "conflicts": (visibility.conflicts_for(user=request.user, session=session)
                      if visibility.conflicts_visible(user=request.user, session=session)
                      else None),
        "blind": visibility.session_is_blind(session=session),
        "priors": priors_views.priors_context(user=request.user, session=session),
        "section": "screening",
        "can": _can(request, session)})


def _can(request: HttpRequest, session: Any) -> dict[str, bool]:
    # Screening also depends on the session's screeners, which the role table cannot know.
    can = policy.actions_on(user=request.user, obj=session)
    can["screen"] = policy.can(user=request.user, action=policy.Action.SCREEN, obj=session)
    return can


@login_required
@require_GET
def screen_page(request: HttpRequest, pk: int) -> HttpResponse:
    session = selectors.session_get(user=request.user, pk=pk, action=policy.Action.SCREEN)
    page_project_show(request=request, project_id=session.project_id)
    return render(request, "screening/screen.html", {
        "session": session, "section": "screening",
        "progress": visibility.progress_for(user=request.user, session=session),
        "skipped": skip.skipped_payload(user=request.user, session=session),
        "can": _can(request, session)})


@login_required
def session_desk(request: HttpRequest, pk: int) -> HttpResponse:
    """A maintainer writes the session's criteria, terms, exclusion reasons and screeners."""
    session = selectors.session_get(user=request.user, pk=pk,
                                    action=policy.Action.MANAGE_SCREENING)
    page_project_show(request=request, project_id=session.project_id)
    form = DeskForm(request.POST or None, initial=DeskForm.initial_of(session),
                    members=desk.screener_choices(session=session),
                    creator=session.created_by.get_username() if session.created_by else "",
                    may_choose=policy.can(user=request.user, obj=session,
                                          action=policy.Action.CHOOSE_SCREENERS))
    if request.method == "POST" and form.is_valid():
        try:
            desk.session_desk_update(user=request.user, session=session, **form.cleaned_data)
        except services.ScreeningError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, "Criteria, terms, reasons and screeners saved.")
            return redirect("screening:detail", pk=session.pk)
    return render(request, "screening/desk.html", {"session": session, "form": form,
                                                   "section": "screening"})


@login_required
@require_GET
def summary_json(request: HttpRequest, pk: int) -> JsonResponse:
    session = selectors.session_get(user=request.user, pk=pk)
    return JsonResponse(visibility.summary_for(
        user=request.user, session=session,
        summary=selectors.session_summary_for_page(session=session)))


def _former_reviewer(view: Any) -> Any:
    """A reviewer removed mid-session no longer sees the session (404): tell them why instead.
    A refusal by role or by the session's screeners is answered in JSON too, so the screen
    page can show the policy's sentence."""
    @wraps(view)
    def wrapped(request: HttpRequest, pk: int) -> HttpResponse:
        try:
            return view(request, pk)
        except policy.RoleRequired as exc:
            return JsonResponse({"detail": exc.message}, status=403)
        except Http404:
            kept = selectors.decisions_kept_count(user=request.user, session_id=pk)
            if not kept:
                raise
            return JsonResponse({"detail": services.former_member_message(kept=kept)},
                                status=403)
    return wrapped


@login_required
@require_GET
@_former_reviewer
def next_json(request: HttpRequest, pk: int) -> JsonResponse:
    session = selectors.session_get(user=request.user, pk=pk, action=policy.Action.SCREEN)
    # The record on screen and the answers still in flight: a handful, never a long list.
    exclude = [int(x) for x in request.GET.get("exclude", "").split(",")[:MAX_EXCLUDED]
               if x.isdigit()]
    record = selectors.record_next(user=request.user, session=session, exclude=exclude)
    if record is None:
        return JsonResponse({"record": None, "phase": session.phase})
    return JsonResponse({"record": visibility.payload_for(
        user=request.user, session=session,
        payload=selectors.record_payload(record=record, user=request.user)),
        "phase": session.phase})


@login_required
@require_GET
@_former_reviewer
def recent_json(request: HttpRequest, pk: int) -> JsonResponse:
    """The reviewer's last decided records (undo after a reload) and their progress."""
    session = selectors.session_get(user=request.user, pk=pk, action=policy.Action.SCREEN)
    return JsonResponse({
        "records": [visibility.payload_for(user=request.user, session=session, payload=p)
                    for p in selectors.decisions_recent(user=request.user, session=session)],
        "progress": visibility.progress_for(user=request.user, session=session)})


@login_required
@require_POST
@_former_reviewer
def decide_json(request: HttpRequest, pk: int) -> JsonResponse:
    session = selectors.session_get(user=request.user, pk=pk, action=policy.Action.SCREEN)
    try:
        body: dict[str, Any] = json.loads(request.body or b"{}")
        record = selectors.record_get(user=request.user, session=session,
                                      pk=int(body.get("record", 0)))
        services.decision_record(user=request.user, record=record,
                                 values=dict(body.get("values") or {}),
                                 note=str(body.get("note") or ""),
                                 reasons=dict(body.get("reasons") or {}))
    except (ValueError, TypeError) as exc:  # ScreeningError is a ValueError
        return JsonResponse({"detail": str(exc)}, status=400)
    return JsonResponse({"saved": True, "record": record.pk, "progress":
                         visibility.progress_for(user=request.user, session=session)})


def _act(request: HttpRequest, pk: int, action: str) -> HttpResponse:
    session = selectors.session_get(user=request.user, pk=pk)
    try:
        if action == "resolve":
            record = selectors.record_get(user=request.user, session=session,
                                          pk=int(request.POST.get("record", 0)))
            services.conflict_resolve(user=request.user, record=record,
                                      label=request.POST.get("label", ""),
                                      value=request.POST.get("value", ""),
                                      note=request.POST.get("note", ""))
        elif action == "sampling":
            services.sampling_start(user=request.user, session=session)
        elif action == "stop":
            services.session_stop(user=request.user, session=session,
                                  force=request.POST.get("force") == "on")
        elif action == "train":
            job = training.session_train(user=request.user, session=session)
            messages.success(request, f"Training job {job.pk} started on the decisions.")
    except ValueError as exc:
        messages.error(request, str(exc))
    return redirect("screening:detail", pk=session.pk)


@login_required
@require_POST
def session_action(request: HttpRequest, pk: int, action: str) -> HttpResponse:
    return _act(request, pk, action)


@login_required
@require_GET
def session_export(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    session = selectors.session_get(user=request.user, pk=pk, action=policy.Action.DOWNLOAD)
    sight = visibility.session_sight(user=request.user, session=session)
    if fmt == "prisma":
        return JsonResponse(export.prisma_for(session, sight=sight))
    writer, content_type = EXPORTS[fmt]
    response = StreamingHttpResponse(writer(session, sight=sight), content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="screening-{session.pk}.{fmt}"'
    return response


@login_required
def simulation_list(request: HttpRequest) -> HttpResponse:
    project = request.project
    form = SimulationForm(request.POST or None, datasets=dataset_selectors.dataset_list(
        user=request.user, project=project))
    if request.method == "POST" and form.is_valid():
        try:
            run = simulation_runs.simulation_run_create(user=request.user, **form.cleaned_data)
        except services.ScreeningError as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("screening:simulation", pk=run.pk)
    return render(request, "screening/simulations.html", {
        "runs": selectors.simulation_run_list(user=request.user, project=project),
        "form": form, "section": "screening",
        "may_create": policy.can(user=request.user, action=policy.Action.MANAGE_SCREENING,
                                 project=project)})


@login_required
@require_GET
def simulation_detail(request: HttpRequest, pk: int) -> HttpResponse:
    run = selectors.simulation_run_get(user=request.user, pk=pk)
    page_project_show(request=request, project_id=run.dataset.project_id)
    return render(request, "screening/simulation.html", {
        "run": run, "summary": run.result.get("summary"), "section": "screening",
        "chart": chart.recall_chart(result=run.result, recall_target=run.recall_target)})
