"""The review page of a finished batch: one article per screen or a dense list, corrections
saved one by one (JSON for static/js/review.js, a redirect without it), and the one-click
dataset + retraining. A batch outside the person's projects is a 404; reviewing needs the
reviewer role in the batch's project (403 naming it), retraining the maintainer's."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from classification.models import BatchJob
from classification.review import selectors, services
from classification.review.models import ReviewItem
from projects import policy

LIST_PAGE = 50


def batch_get(request: HttpRequest, batch_id: str,
              action: str = policy.Action.REVIEW) -> BatchJob:
    return selectors.review_batch_get(user=request.user, batch_id=batch_id, action=action)


def _page_url(batch: BatchJob, **query: Any) -> str:
    url = reverse("classification:review:page", args=[batch.pk.hex])
    pairs = [f"{key}={value}" for key, value in query.items() if value not in (None, "")]
    return f"{url}?{'&'.join(pairs)}" if pairs else url


@login_required
@require_GET
def review_page(request: HttpRequest, batch_id: str) -> HttpResponse:
    batch = batch_get(request, batch_id)
    if batch.status != BatchJob.Status.COMPLETED:
        messages.info(request, "The review opens once the batch has completed.")
        return redirect("classification:batch_detail", batch_id=batch.pk.hex)
    try:
        services.review_items_ensure(batch=batch)
    except services.ReviewError as exc:
        messages.error(request, str(exc))
        return redirect("classification:batch_detail", batch_id=batch.pk.hex)
    ml_model = batch.ml_model
    thresholds = selectors.review_thresholds(ml_model=ml_model)
    mode = "list" if request.GET.get("mode") == "list" else "one"
    context: dict[str, Any] = {
        "batch": batch, "batch_id": batch.pk.hex, "model": ml_model, "mode": mode,
        "multi": ml_model.is_multilabel, "agreement": selectors.review_agreement(batch=batch),
        "suggestions": selectors.review_suggestions(batch=batch),
        "rounds": selectors.review_rounds(batch=batch),
        "one_url": _page_url(batch), "list_url": _page_url(batch, mode="list"),
        "may": policy.actions_on(user=request.user, obj=batch),
    }

    def labels(item: ReviewItem) -> list[dict[str, Any]]:
        return selectors.review_item_labels(item=item, ml_model=ml_model, thresholds=thresholds)

    if mode == "one":
        row = request.GET.get("row", "")
        item = (selectors.review_item_get(batch=batch, row=int(row)) if row.isdigit()
                else selectors.review_item_next(batch=batch))
        if item is None and row:
            raise Http404("No such article in this batch.")
        if item is not None:
            before, after = selectors.review_item_neighbours(item=item)
            context.update({
                "item": item, "labels": labels(item),
                "position": selectors.review_item_position(item=item),
                "prev_url": _page_url(batch, row=before.row) if before else "",
                "next_url": _page_url(batch, row=after.row) if after else "",
            })
    else:
        show = request.GET.get("show")
        show = show if show in selectors.FILTERS else "todo"
        page = Paginator(selectors.review_queue(batch=batch, show=show).select_related("reviewer"),
                         LIST_PAGE).get_page(request.GET.get("page"))
        context.update({
            "show": show, "page": page, "filters": selectors.FILTERS,
            "entries": [{"item": item, "labels": labels(item)} for item in page],
        })
    return render(request, "classification/review/page.html", context)


@login_required
@require_POST
def review_item_save(request: HttpRequest, batch_id: str, row: str) -> HttpResponse:
    batch = batch_get(request, batch_id)
    item = selectors.review_item_get(batch=batch, row=int(row))
    if item is None:
        raise Http404("No such article in this batch.")
    wants_json = "application/json" in request.headers.get("Accept", "")
    try:
        services.review_item_correct(item=item, reviewer=request.user,
                                     labels=request.POST.getlist("labels"))
    except services.ReviewError as exc:
        if wants_json:
            return JsonResponse({"detail": str(exc)}, status=400)
        messages.error(request, str(exc))
        return redirect(_back(request, batch, item))
    following = selectors.review_item_next(batch=batch, after=item)
    next_url = _page_url(batch, row=following.row) if following else _page_url(batch)
    if wants_json:
        return JsonResponse({
            "row": item.row, "reviewed_labels": item.reviewed_labels,
            "confirmed": item.is_confirmed, "next_url": next_url,
            "agreement": selectors.review_agreement(batch=batch),
        })
    if request.POST.get("mode") == "list":
        return redirect(_back(request, batch, item))
    return redirect(next_url)


def _back(request: HttpRequest, batch: BatchJob, item: ReviewItem) -> str:
    if request.POST.get("mode") == "list":
        page = request.POST.get("page", "")
        show = request.POST.get("show", "")
        return _page_url(batch, mode="list", show=show if show in selectors.FILTERS else "",
                         page=page if page.isdigit() else "") + f"#row-{item.row}"
    return _page_url(batch, row=item.row)


def _round_from(request: HttpRequest, batch: Any, make: Any) -> Any:
    """Run one of the review's "make something from the corrections" services, or say why not.

    A broker outage raises QueueUnavailable from the retrain: the middleware answers 503.
    """
    try:
        return make(batch=batch, user=request.user,
                    include_training_data=request.POST.get("include_training_data") == "1")
    except services.ReviewError as exc:
        messages.error(request, str(exc))
        return None


@login_required
@require_POST
def review_dataset(request: HttpRequest, batch_id: str) -> HttpResponse:
    batch = batch_get(request, batch_id)
    round_ = _round_from(request, batch, services.review_dataset_create)
    if round_ is None:
        return redirect(_page_url(batch))
    messages.success(request, f"Dataset “{round_.dataset.name}” made from "
                              f"{round_.corrections} reviewed article(s).")
    return redirect("datasets:detail", pk=round_.dataset_id)


@login_required
@require_POST
def review_retrain(request: HttpRequest, batch_id: str) -> HttpResponse:
    batch = batch_get(request, batch_id, policy.Action.TRAIN)
    round_ = _round_from(request, batch, services.review_retrain_start)
    if round_ is None:
        return redirect(_page_url(batch))
    messages.success(request, f"Retraining on “{round_.dataset.name}”: "
                              f"{round_.corrections} reviewed article(s).")
    return redirect("classification:job_detail", pk=round_.training_job_id)
