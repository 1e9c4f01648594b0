"""The near-matches page's two other forms: two articles marked as one by hand, and a merge a
person made undone. Thin: each queues one import job (unmerge.py) that makes the new version;
the import's page follows it. A bad pick is said on the page, and nothing is queued."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from core.diskspace import DiskFull
from projects import policy

from . import selectors
from .readers import DatasetFileError
from .unmerge_jobs import duplicates_mark_job_create, merged_group_split_job_create

REFUSALS = (ValueError, DatasetFileError, DiskFull)


@login_required
@require_POST
def dataset_duplicates_mark(request: HttpRequest, pk: int) -> HttpResponse:
    """POST first, second: two articles (row number, pmid:…, doi:…) to merge as one."""
    dataset = selectors.dataset_get(user=request.user, pk=pk, action=policy.Action.UPLOAD)
    picks = [request.POST.get("first", ""), request.POST.get("second", "")]
    try:
        job = duplicates_mark_job_create(owner=request.user, dataset=dataset, picks=picks)
    except REFUSALS as exc:
        messages.error(request, f"Nothing marked: {getattr(exc, 'message', None) or exc}")
        return redirect("datasets:near_matches", pk=dataset.pk)
    messages.info(request, "Two articles marked as one: a worker is making a new version "
                           f"from the {dataset.row_count} articles of this one.")
    return redirect("datasets:import_detail", pk=job.pk)


@login_required
@require_POST
def dataset_merge_undo(request: HttpRequest, pk: int) -> HttpResponse:
    """POST group: the index of a merge a person made (the page's list), to undo."""
    dataset = selectors.dataset_get(user=request.user, pk=pk, action=policy.Action.UPLOAD)
    group = request.POST.get("group", "")
    try:
        if not group.isdigit():
            raise ValueError("Choose a merge to undo.")
        job = merged_group_split_job_create(owner=request.user, dataset=dataset,
                                            index=int(group))
    except REFUSALS as exc:
        messages.error(request, f"Nothing undone: {getattr(exc, 'message', None) or exc}")
        return redirect("datasets:near_matches", pk=dataset.pk)
    messages.info(request, "A worker is making a new version with the merge undone.")
    return redirect("datasets:import_detail", pk=job.pk)
