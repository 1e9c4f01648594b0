"""The review desk's pages for those who report the review: conflicts judged one after the
other with the record in view, the PRISMA 2020 flow diagram (page, SVG, PNG, PDF) with a
maintainer's form for its sources, and the owner's end of blinding. Thin: reads through
screening.selectors / visibility / prisma, writes through screening.services and
prisma_edit, permissions through projects.policy."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from projects import policy
from projects.context import page_project_show
from screening import (
    conflict_desk,
    export,
    prisma_diagram,
    prisma_edit,
    resolving,
    selectors,
    services,
    visibility,
)
from screening.errors import ScreeningConflict
from screening.models import ScreeningSession, Stage


@login_required
def conflicts_page(request: HttpRequest, pk: int) -> HttpResponse:
    """One open conflict at a time (the first, or `?skip=N` past it), resolved with y / n like
    a record is screened; after each resolution the next one comes. `?record=&label=` holds
    one record's title/abstract label in view instead, conflict or not. A refused resolution
    (409) comes back on the same card saying why, with what trying again takes."""
    session = selectors.session_get(user=request.user, pk=pk)
    page_project_show(request=request, project_id=session.project_id)
    if request.method == "POST":
        return _conflict_resolve(request, session)
    if request.GET.get("record"):
        try:
            record = selectors.record_get(user=request.user, session=session,
                                          pk=_skip({"skip": request.GET["record"]}))
            held = conflict_desk.conflict_of_record(user=request.user, session=session,
                                                    record=record,
                                                    label=request.GET.get("label", ""))
        except ValueError as exc:
            messages.error(request, str(exc))
            return redirect(request.path)
        return _conflicts_render(request, session, conflict=held, at=1, total=1, held=True)
    conflicts = visibility.conflicts_for(user=request.user, session=session)
    skip = min(_skip(request.GET), max(len(conflicts) - 1, 0))
    return _conflicts_render(request, session, conflict=conflicts[skip] if conflicts else None,
                             at=skip + 1, total=len(conflicts))


def _conflict_resolve(request: HttpRequest, session: ScreeningSession) -> HttpResponse:
    post = request.POST
    try:
        record = selectors.record_get(user=request.user, session=session,
                                      pk=int(post.get("record", 0)))
        resolving.conflict_resolve_at(
            user=request.user, record=record, stage=post.get("stage", Stage.TITLE_ABSTRACT),
            label=post.get("label", ""), value=post.get("value", ""),
            reason=post.get("reason", ""), note=post.get("note", ""),
            replaces=post.get("replaces", ""),
            confirm_discard_fulltext=post.get("confirm_discard_fulltext") == "true",
            discard_reason=post.get("discard_reason", ""))
    except ScreeningConflict as exc:
        # Nothing was written: the card comes back as sent, the note and choice kept.
        held = (conflict_desk.conflict_of_record(user=request.user, session=session,
                                                 record=record, label=post.get("label", ""))
                if post.get("stage", Stage.TITLE_ABSTRACT) == Stage.TITLE_ABSTRACT else None)
        if held is not None:
            return _conflicts_render(request, session, conflict=held, at=1, total=1,
                                     held=True, refusal=str(exc), sent=post, status=409)
        messages.error(request, str(exc))
    except ValueError as exc:  # ScreeningError is a ValueError; a bad record id too
        messages.error(request, str(exc))
    return redirect(f"{request.path}?skip={_skip(post)}")


def _conflicts_render(request: HttpRequest, session: ScreeningSession, *, conflict: Any,
                      at: int, total: int, held: bool = False, refusal: str = "",
                      sent: Any = None, status: int = 200) -> HttpResponse:
    return render(request, "screening/conflicts.html", {
        "session": session, "conflict": conflict, "at": at, "total": total,
        "next_skip": at, "section": "screening", "held": held, "refusal": refusal,
        "sent": sent or {},
        "can": policy.actions_on(user=request.user, obj=session)}, status=status)


def _skip(data: object) -> int:
    value = str(getattr(data, "get", lambda *_: "0")("skip", "0"))
    return int(value) if value.isdigit() and len(value) < 7 else 0


def _counts(request: HttpRequest, session: ScreeningSession) -> dict[str, Any]:
    """A blind reviewer's boxes after identification are hidden (visibility.prisma_shown)."""
    return export.prisma_for(session, sight=visibility.session_sight(user=request.user,
                                                                      session=session))


@login_required
@require_GET
def prisma_page(request: HttpRequest, pk: int) -> HttpResponse:
    session = selectors.session_get(user=request.user, pk=pk, action=policy.Action.DOWNLOAD)
    page_project_show(request=request, project_id=session.project_id)
    counts = _counts(request, session)
    return render(request, "screening/prisma.html", {
        "session": session, "counts": counts, "section": "screening",
        "svg": prisma_diagram.prisma_svg(counts, title=session.name),
        "can": policy.actions_on(user=request.user, obj=session),
        "kinds": prisma_diagram.KINDS})


@login_required
@require_POST
def prisma_sources(request: HttpRequest, pk: int) -> HttpResponse:
    """The PRISMA page's form: a maintainer names the sources and gives the counts from before
    import; a bad field is said and nothing is kept."""
    session = selectors.session_get(user=request.user, pk=pk)
    try:
        data = prisma_edit.prisma_form_data(request.POST)
        changes = prisma_edit.prisma_sources_edit(user=request.user, session=session, data=data)
    except prisma_edit.PrismaSourcesInvalid as exc:
        for field, why in exc.errors.items():
            messages.error(request, f"{field}: {why}")
    else:
        messages.success(request, f"PRISMA sources saved ({len(changes)} changes)."
                         if changes else "Nothing changed.")
    return redirect("screening:prisma", pk=session.pk)


def _dpi(request: HttpRequest) -> int:
    """The PNG's resolution: `?dpi=` within DPI_RANGE, else the 300 journals ask for;
    ValueError with the sentence for any other value."""
    value = request.GET.get("dpi", "").strip()
    low, high = prisma_diagram.DPI_RANGE
    if not value:
        return prisma_diagram.DPI
    if not (value.isdigit() and len(value) <= 4 and low <= int(value) <= high):
        raise ValueError(f"dpi must be a whole number from {low} to {high} (got {value[:20]!r})")
    return int(value)


@login_required
@require_GET
def prisma_download(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    session = selectors.session_get(user=request.user, pk=pk, action=policy.Action.DOWNLOAD)
    try:
        dpi = _dpi(request)
    except ValueError as exc:
        return HttpResponseBadRequest(str(exc), content_type="text/plain; charset=utf-8")
    counts = _counts(request, session)
    if fmt == "svg":
        response = HttpResponse(prisma_diagram.prisma_svg(counts, title=session.name),
                                content_type="image/svg+xml; charset=utf-8")
    elif fmt == "pdf":
        response = HttpResponse(prisma_diagram.prisma_pdf(counts, title=session.name),
                                content_type="application/pdf")
    else:
        response = HttpResponse(prisma_diagram.prisma_png(counts, title=session.name,
                                                          dpi=dpi),
                                content_type="image/png")
    response["Content-Disposition"] = f'attachment; filename="prisma-{session.pk}.{fmt}"'
    return response


@login_required
@require_POST
def blinding_end(request: HttpRequest, pk: int) -> HttpResponse:
    session = selectors.session_get(user=request.user, pk=pk)
    services.session_blinding_end(user=request.user, session=session)
    messages.success(request, "Blinding ended: every member now sees every decision.")
    return redirect("screening:detail", pk=session.pk)
