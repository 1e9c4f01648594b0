"""The full-text stage's pages: the records that reached it, and one record's report (attach a
PDF, mark it not retrieved, decide with an exclusion reason, resolve). Thin: reads through
screening.fulltext_selectors, writes through screening.fulltext, permissions in the policy."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET

from projects import policy
from projects.context import page_project_show
from screening import fulltext, fulltext_selectors, highlight, selectors, visibility
from screening.errors import ScreeningError


@login_required
@require_GET
def fulltext_list(request: HttpRequest, pk: int) -> HttpResponse:
    session = selectors.session_get(user=request.user, pk=pk)
    page_project_show(request=request, project_id=session.project_id)
    sight = visibility.session_sight(user=request.user, session=session)
    if not visibility.fulltext_open(user=request.user, session=session):
        # The list is which records passed title/abstract: a blind reviewer waits for the stop.
        return render(request, "screening/fulltext_list.html", {
            "session": session, "rows": [], "closed": policy.FullTextClosed().message,
            "section": "screening"})
    rows = [{"record": record, "labels": labels,
             "identity": visibility.record_identity(record=record),
             "status": getattr(getattr(record, "fulltext", None), "status", "sought"),
             "final": ({label: record.fulltext_final.get(label, "") for label in labels}
                       if sight.finals_shown else None)}
            for record, labels in fulltext_selectors.fulltext_records(session=session)]
    return render(request, "screening/fulltext_list.html", {
        "session": session, "rows": rows, "section": "screening",
        "may_attach": policy.can(user=request.user, action=policy.Action.SCREEN, obj=session)})


def _post(request: HttpRequest, record: object, action: str) -> None:
    data = request.POST
    if action == "upload":
        if "file" not in request.FILES:
            raise ScreeningError("Choose the report's PDF to attach.")
        fulltext.fulltext_report_attach(user=request.user, record=record,
                                        uploaded_file=request.FILES["file"])
    elif action == "not_retrieved":
        fulltext.fulltext_not_retrieved(user=request.user, record=record,
                                        reason=data.get("reason", ""))
    elif action == "decide":
        labels = data.getlist("label")
        fulltext.fulltext_decision_record(
            user=request.user, record=record,
            values={label: data.get(f"value-{label}", "") for label in labels},
            reasons={label: data.get(f"reason-{label}", "") for label in labels},
            note=data.get("note", "")[:2000])
    elif action == "resolve":
        fulltext.fulltext_resolve(user=request.user, record=record,
                                  label=data.get("label", ""), value=data.get("value", ""),
                                  reason=data.get("reason", ""), note=data.get("note", ""))


@login_required
def fulltext_record(request: HttpRequest, pk: int, record_id: int) -> HttpResponse:
    session = selectors.session_get(user=request.user, pk=pk)
    page_project_show(request=request, project_id=session.project_id)
    record, labels = fulltext_selectors.fulltext_record_get(user=request.user, session=session,
                                                            pk=record_id)
    if request.method == "POST":
        action = request.POST.get("action", "")
        try:
            _post(request, record, action)
        except ScreeningError as exc:  # a refusal: said on the page, nothing kept
            messages.error(request, str(exc))
        else:
            messages.success(request, {"upload": "The report is attached and its text "
                                       "extracted.", "not_retrieved": "Marked not retrieved.",
                                       "decide": "Your full-text decision is saved.",
                                       "resolve": "Resolved."}.get(action, "Done."))
        return redirect("screening:fulltext_record", pk=session.pk, record_id=record.pk)
    state = fulltext_selectors.fulltext_state(user=request.user, record=record, labels=labels)
    report = fulltext_selectors.fulltext_report(record=record)
    return render(request, "screening/fulltext_record.html", {
        "session": session, "record": record, "state": state, "report": report,
        # The session's terms marked in the report as on the screen page (segments, escaped
        # one by one by the template).
        "text_marks": highlight.highlight_segments(
            text=report.text, include=session.include_terms or [],
            exclude=session.exclude_terms or []),
        "finals": (None if state["final"] is None else [
            (label, value, state["reasons"].get(label, ""))
            for label, value in state["final"].items()]),
        "may_screen": policy.can(user=request.user, action=policy.Action.SCREEN, obj=session),
        "may_resolve": policy.can(user=request.user, action=policy.Action.RESOLVE_CONFLICTS,
                                  obj=session),
        "section": "screening"})
