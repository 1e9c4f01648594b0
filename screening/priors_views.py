"""The session page's "Prior knowledge" section (maintainers): mark records known relevant or
irrelevant by a search, record ids, PMIDs or a file of included studies, list them, remove one.

Thin: the same path as the API (priors_api.priors_post, screening.priors). A write refused is
shown on the priors page (400) with what was typed kept; a write done redirects back to it
saying what was marked and what was left out.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import path
from django.views.decorators.http import require_POST

from projects import policy
from projects.context import page_project_show
from screening import priors, selectors
from screening.errors import ScreeningError


def priors_context(*, user: Any, session: Any) -> dict[str, Any] | None:
    """What the section shows; None for those who may not manage the session."""
    if not policy.can(user=user, action=policy.Action.MANAGE_SCREENING, obj=session):
        return None
    return {"list": [priors.prior_payload(p) for p in priors.prior_list(session=session)],
            "open": (session.phase == session.Phase.RANKED
                     and session.sampling_started_at is None)}


def _said(done: dict[str, Any]) -> str:
    known = "relevant" if done["value"] == "yes" else "irrelevant"
    said = f"{len(done['set'])} record(s) marked known {known} for {done['label']}."
    if done["left"]:
        said += f" {len(done['left'])} already screened, left as they are."
    if done["unmatched_count"]:
        said += (f" {done['unmatched_count']} of the file's studies matched no record: "
                 + "; ".join(done["unmatched"][:5]) + ("…" if done["unmatched_count"] > 5
                                                       else ""))
    return said


@login_required
def priors_page(request: HttpRequest, pk: int) -> HttpResponse:
    session = selectors.session_get(user=request.user, pk=pk,
                                    action=policy.Action.MANAGE_SCREENING)
    page_project_show(request=request, project_id=session.project_id)
    error, status = "", 200
    if request.method == "POST":
        try:
            done = priors.priors_post(user=request.user, session=session, data=request.POST,
                               upload=request.FILES.get("file"))
        except ScreeningError as exc:
            error, status = str(exc), 400
        else:
            messages.success(request, _said(done))
            return redirect("screening:priors", pk=session.pk)
    return render(request, "screening/priors.html", {
        "session": session, "section": "screening", "error": error, "typed": request.POST,
        "priors": priors_context(user=request.user, session=session)}, status=status)


@login_required
@require_POST
def prior_remove(request: HttpRequest, pk: int, prior_id: int) -> HttpResponse:
    session = selectors.session_get(user=request.user, pk=pk,
                                    action=policy.Action.MANAGE_SCREENING)
    try:
        removed = priors.prior_remove(user=request.user, session=session, prior_id=prior_id)
    except ScreeningError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Prior {removed.label}={removed.value} removed from record "
                                  f"{removed.record.position + 1}.")
    return redirect("screening:priors", pk=session.pk)


urlpatterns = [
    path("<int:pk>/priors/", priors_page, name="priors"),
    path("<int:pk>/priors/<int:prior_id>/remove/", prior_remove, name="prior_remove"),
]
