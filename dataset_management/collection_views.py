"""Pages for collections: several files uploaded as one dataset, files added to a dataset (a
new version), both as import jobs a worker runs, and the near matches a person confirms or
splits. Thin: the work is in dataset_management.collection_jobs and .collection."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from core.diskspace import DiskFull
from core.paging import page_of
from projects import policy

from . import selectors
from .collection import COUNTS_KEY, DECISIONS
from .collection_jobs import collection_job_create, near_matches_job_create
from .collection_merge import KEPT_GROUPS
from .forms import DatasetUploadForm
from .merged_groups import MAX_KEPT
from .models import ImportJob
from .near_review import (
    merged_groups_shown,
    near_bands_list,
    near_pairs_shown,
    near_review_decisions,
    pair_band,
)
from .readers import DatasetFileError

logger = logging.getLogger(__name__)

NEAR_MATCHES_PER_PAGE = 20


# A broker that is down (QueueUnavailable) reaches core's middleware: 503, as for one file.
IMPORT_REFUSALS = (DatasetFileError, ValueError, DiskFull)


@login_required
@require_POST
def dataset_upload_collection(request: HttpRequest) -> HttpResponse:
    """Several exports (any mix of formats) into one dataset of the current project: stored
    and queued; the import's page follows the worker that merges and imports them."""
    name = request.POST.get("name", "").strip()[:200]
    try:
        job = collection_job_create(
            owner=request.user, project=request.project, uploads=request.FILES.getlist("files"),
            name=name, description=request.POST.get("description", ""),
            unlabelled=bool(request.POST.get("unlabelled")))
    except IMPORT_REFUSALS as exc:
        return render(request, "datasets/upload.html", {
            "form": DatasetUploadForm(), "max_mb": settings.MAX_UPLOAD_SIZE // 1048576,
            "collection_error": getattr(exc, "message", str(exc)), "collection_name": name,
        }, status=507 if isinstance(exc, DiskFull) else 400)
    return redirect("datasets:import_detail", pk=job.pk)


@login_required
@require_POST
def dataset_add_files(request: HttpRequest, pk: int) -> HttpResponse:
    """The dataset's rows and the new files, merged into a new dataset (a new version) by a
    worker; the import's page follows it. `unlabelled` makes the version prediction only."""
    dataset = selectors.dataset_get(user=request.user, pk=pk, action=policy.Action.UPLOAD)
    try:
        job = collection_job_create(owner=request.user, add_to=dataset,
                                    uploads=request.FILES.getlist("files"),
                                    unlabelled=bool(request.POST.get("unlabelled")))
    except IMPORT_REFUSALS as exc:
        messages.error(request, f"No new version made: {getattr(exc, 'message', exc)}")
        return redirect("datasets:detail", pk=dataset.pk)
    return redirect("datasets:import_detail", pk=job.pk)


@login_required
def dataset_near_matches(request: HttpRequest, pk: int) -> HttpResponse:
    """GET: the pairs that a rule matched but something kept apart, by similarity band, 20
    to a page (?band= shows one band). POST: band_<name> and pair_<n> as "merge" or
    "split", a pair's choice over its band's; all of it is applied as one new version."""
    if request.method == "POST":
        return _decide(request, pk)
    dataset = selectors.dataset_get(user=request.user, pk=pk)
    counts = (dataset.report or {}).get(COUNTS_KEY) or {}
    pairs = counts.get("near_matches") or []
    band = request.GET.get("band", "")
    listed = [{**pair, "index": i} for i, pair in enumerate(pairs)
              if not band or pair_band(pair) == band]
    page = page_of(listed, request.GET.get("page"), per_page=NEAR_MATCHES_PER_PAGE)
    merges = merged_groups_shown(dataset=dataset, page=request.GET.get("merges_page"))
    return render(request, "datasets/near_matches.html", {
        "dataset": dataset, "may": policy.actions_on(user=request.user, obj=dataset),
        "page": page, "pairs": near_pairs_shown(dataset=dataset, pairs=list(page.object_list)),
        "merges": merges, "kept_automatic": KEPT_GROUPS, "kept_most": MAX_KEPT,
        "total": len(pairs), "found": counts.get("near_matches_found", len(pairs)),
        "is_collection": bool(counts), "band": band,
        "bands": near_bands_list(pairs=pairs, articles=dataset.row_count),
        "last_review": counts.get("last_review"),
    })


def _decide(request: HttpRequest, pk: int) -> HttpResponse:
    dataset = selectors.dataset_get(user=request.user, pk=pk, action=policy.Action.UPLOAD)
    pair_choices: dict[int, str] = {}
    band_choices: dict[str, str] = {}
    for key, value in request.POST.items():
        number = key.removeprefix("pair_")
        if key.startswith("pair_") and number.isdigit() and value in DECISIONS:
            pair_choices[int(number)] = value
        elif key.startswith("band_") and value in DECISIONS:
            band_choices[key.removeprefix("band_")] = value
    pairs = ((dataset.report or {}).get(COUNTS_KEY) or {}).get("near_matches") or []
    decisions = near_review_decisions(pairs=pairs, band_choices=band_choices,
                                      pair_choices=pair_choices)
    try:
        result = near_matches_job_create(owner=request.user, dataset=dataset,
                                         decisions=decisions)
    except (ValueError, DatasetFileError, DiskFull) as exc:
        messages.error(request, getattr(exc, "message", None) or str(exc))
        return redirect("datasets:near_matches", pk=dataset.pk)
    merged = sum(1 for d in decisions.values() if d == "merge")
    split = len(decisions) - merged
    if isinstance(result, ImportJob):  # a merge: a worker writes the new version
        messages.info(request, f"{merged} pair(s) to merge, {split} kept apart: a worker is "
                               f"making one new version from the {dataset.row_count} "
                               "articles of this one.")
        return redirect("datasets:import_detail", pk=result.pk)
    messages.success(request, _decided(merged=merged, split=split, made=result,
                                       source=dataset))
    return redirect("datasets:near_matches", pk=result.pk)


def _decided(*, merged: int, split: int, made: Any, source: Any) -> str:
    said = f"{merged} pair(s) merged, {split} kept apart"
    if made.pk != source.pk:
        return f"{said}: made “{made.name}”."
    return f"{said}."
