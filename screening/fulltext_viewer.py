"""The full-text stage's report PDF as a file (for the record page's viewer, and to download)
and its bulk upload page. Thin: who may see or attach is the policy's (through the same
selectors as the record page), matching and attaching is screening.fulltext_bulk's."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_http_methods

from core import filestore
from projects import policy
from projects.context import page_project_show
from screening import fulltext_bulk, fulltext_selectors, selectors, visibility
from screening.errors import ScreeningError
from screening.models import FullTextReport


@login_required
@require_GET
def fulltext_pdf(request: HttpRequest, pk: int, record_id: int) -> FileResponse:
    """The report's PDF, shown inline, to whoever may read the record's full text; 404 for a
    record without one (or one the reader may not see)."""
    session = selectors.session_get(user=request.user, pk=pk)
    record, _labels = fulltext_selectors.fulltext_record_get(user=request.user,
                                                             session=session, pk=record_id)
    report = fulltext_selectors.fulltext_report(record=record)
    if report.status != FullTextReport.Status.RETRIEVED or not report.pdf_path:
        raise Http404("This record has no report PDF attached.")
    try:
        path = filestore.file_local(name=report.pdf_path)
        handle = path.open("rb")
    except (filestore.FileStoreError, OSError):
        raise Http404("This report's PDF is missing from the storage.") from None
    response = FileResponse(handle, content_type="application/pdf",
                            filename=f"record-{record.position + 1}.pdf")
    response["Content-Disposition"] = f'inline; filename="record-{record.position + 1}.pdf"'
    response["X-Content-Type-Options"] = "nosniff"
    # Behind a login: no shared cache keeps it, and the browser asks again each time.
    response["Cache-Control"] = "private, no-cache"
    return response


@login_required
@require_http_methods(["GET", "POST"])
def fulltext_bulk_page(request: HttpRequest, pk: int) -> HttpResponse:
    """Many PDFs (or ZIPs of them) matched to the records at full text and attached; the
    answer says what became of each file."""
    session = selectors.session_get(user=request.user, pk=pk)
    page_project_show(request=request, project_id=session.project_id)
    visibility.fulltext_require_open(user=request.user, session=session)
    policy.require(user=request.user, action=policy.Action.SCREEN, obj=session)
    results = None
    if request.method == "POST":
        try:
            results = fulltext_bulk.fulltext_bulk_attach(
                user=request.user, session=session, files=request.FILES.getlist("files"))
        except ScreeningError as exc:
            messages.error(request, str(exc))
        else:
            attached = sum(r.outcome == fulltext_bulk.ATTACHED for r in results)
            messages.success(request, f"{attached} of {len(results)} file"
                             f"{'' if len(results) == 1 else 's'} attached.")
    return render(request, "screening/fulltext_bulk.html", {
        "session": session, "results": results, "max_files": fulltext_bulk.MAX_FILES,
        "max_parts": settings.DATA_UPLOAD_MAX_NUMBER_FILES,
        "section": "screening"}, status=200)
