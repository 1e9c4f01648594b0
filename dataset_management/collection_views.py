"""Pages for collections: several files uploaded as one dataset, files added to a dataset (a
new version), and the near matches a person confirms or splits. Thin: the work is in
dataset_management.collection."""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from core.diskspace import DiskFull, disk_full_refused
from core.paging import page_of
from projects import policy

from . import selectors
from .collection import (
    COUNTS_KEY,
    DECISIONS,
    collection_add_files,
    collection_create,
    near_matches_decide,
    near_matches_read,
)
from .collection_merge import MergeResult, Source
from .forms import DatasetUploadForm
from .readers import DatasetFileError
from .upload_files import safe_filename, spool

logger = logging.getLogger(__name__)

NEAR_MATCHES_PER_PAGE = 20


def _spooled(request: HttpRequest, folder: Path) -> list[Source]:
    """The request's files on disk, each by its own name; DatasetFileError when there are
    none, one is too large (checked on its bytes), or two share a name."""
    uploads = request.FILES.getlist("files")
    if not uploads:
        raise DatasetFileError("Choose one or more files.")
    names = [safe_filename(upload.name) for upload in uploads]
    if len(set(names)) < len(names):
        raise DatasetFileError("Two of the files have the same name: each record's source "
                               "is named by its file name; rename one.")
    sources = []
    for index, (upload, name) in enumerate(zip(uploads, names, strict=True)):
        path = folder / str(index) / name
        path.parent.mkdir()
        try:
            spool(upload, path)
        except DatasetFileError as exc:
            raise DatasetFileError(f"{name}: {exc.message}") from None
        sources.append(Source(path=path, name=name))
    return sources


def _done(request: HttpRequest, result: MergeResult, made: str) -> None:
    messages.success(request, (
        f"{made}: {result.identified} records identified, {result.duplicates_removed} "
        f"duplicates removed, {len(result.near)} near matches to confirm."))


@login_required
@require_POST
def dataset_upload_collection(request: HttpRequest) -> HttpResponse:
    """Several exports (any mix of formats) into one dataset of the current project."""
    policy.require(user=request.user, action=policy.Action.UPLOAD, project=request.project)
    name = request.POST.get("name", "").strip()[:200]
    try:
        if not name:
            raise DatasetFileError("Give the collection a name.")
        with tempfile.TemporaryDirectory(prefix="medlitbot-upload-") as scratch:
            with disk_full_refused():
                sources = _spooled(request, Path(scratch))
            dataset, result = collection_create(
                owner=request.user, project=request.project.pk, sources=sources, name=name,
                description=request.POST.get("description", ""),
                unlabelled=bool(request.POST.get("unlabelled")))
    except (DatasetFileError, ValueError, DiskFull) as exc:
        status = 507 if isinstance(exc, DiskFull) else 400
        return render(request, "datasets/upload.html", {
            "form": DatasetUploadForm(), "max_mb": settings.MAX_UPLOAD_SIZE // 1048576,
            "collection_error": getattr(exc, "message", str(exc)), "collection_name": name,
        }, status=status)
    _done(request, result, f"Collection “{dataset.name}” created")
    return redirect("datasets:detail", pk=dataset.pk)


@login_required
@require_POST
def dataset_add_files(request: HttpRequest, pk: int) -> HttpResponse:
    """The dataset's rows and the new files, merged into a new dataset (a new version)."""
    dataset = selectors.dataset_get(user=request.user, pk=pk, action=policy.Action.UPLOAD)
    try:
        with tempfile.TemporaryDirectory(prefix="medlitbot-upload-") as scratch:
            with disk_full_refused():
                sources = _spooled(request, Path(scratch))
            created = collection_add_files(dataset=dataset, sources=sources,
                                           user=request.user)
    except (DatasetFileError, ValueError, DiskFull) as exc:
        messages.error(request, f"No new version made: {getattr(exc, 'message', exc)}")
        return redirect("datasets:detail", pk=dataset.pk)
    counts = created.report[COUNTS_KEY]
    messages.success(request, (
        f"Made “{created.name}”: {counts['duplicates_removed']} duplicates removed in all, "
        f"{len(counts['near_matches'])} near matches to confirm."))
    return redirect("datasets:detail", pk=created.pk)


@login_required
def dataset_near_matches(request: HttpRequest, pk: int) -> HttpResponse:
    """GET: the pairs with the same title that differ in year, author or DOI, 20 to a page.
    POST: each pair_<n> as "merge" or "split"; merging makes a new dataset."""
    if request.method == "POST":
        return _decide(request, pk)
    dataset = selectors.dataset_get(user=request.user, pk=pk)
    counts = (dataset.report or {}).get(COUNTS_KEY) or {}
    pairs = counts.get("near_matches") or []
    page = page_of([{**pair, "index": i} for i, pair in enumerate(pairs)],
                   request.GET.get("page"), per_page=NEAR_MATCHES_PER_PAGE)
    return render(request, "datasets/near_matches.html", {
        "dataset": dataset, "may": policy.actions_on(user=request.user, obj=dataset),
        "page": page, "pairs": near_matches_read(dataset=dataset, pairs=list(page.object_list)),
        "total": len(pairs), "found": counts.get("near_matches_found", len(pairs)),
        "is_collection": bool(counts),
    })


def _decide(request: HttpRequest, pk: int) -> HttpResponse:
    dataset = selectors.dataset_get(user=request.user, pk=pk, action=policy.Action.UPLOAD)
    decisions: dict[int, str] = {}
    for key, value in request.POST.items():
        number = key.removeprefix("pair_")
        if key.startswith("pair_") and number.isdigit() and value in DECISIONS:
            decisions[int(number)] = value
    try:
        result = near_matches_decide(dataset=dataset, decisions=decisions, user=request.user)
    except (ValueError, DatasetFileError, DiskFull) as exc:
        messages.error(request, getattr(exc, "message", None) or str(exc))
        return redirect("datasets:near_matches", pk=dataset.pk)
    merged = sum(1 for d in decisions.values() if d == "merge")
    split = len(decisions) - merged
    messages.success(request, _decided(merged=merged, split=split, made=result,
                                       source=dataset))
    return redirect("datasets:near_matches", pk=result.pk)


def _decided(*, merged: int, split: int, made: Any, source: Any) -> str:
    said = f"{merged} pair(s) merged, {split} kept apart"
    if made.pk != source.pk:
        return f"{said}: made “{made.name}”."
    return f"{said}."
