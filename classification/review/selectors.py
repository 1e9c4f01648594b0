"""Review reads: the queue (least certain first), one article's view, agreement, rounds.

Every function takes a batch that the caller already fetched through the policy
(review_batch_get), so nothing here can reach the articles of a project the person is not in.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet

from classification.batches import selectors as batch_selectors
from classification.models import BatchJob, MLModel
from classification.review import uncertainty
from classification.review.models import ReviewItem, ReviewRound
from classification.selectors import mlmodel_manifest
from projects import policy

QUEUE_ORDER = ("-uncertainty", "row")
FILTERS = ("todo", "reviewed", "all")
# A label whose own uncertainty passes this is flagged on the page as the one to look at.
WAVERING = 0.6


def review_batch_get(*, user: Any, batch_id: Any,
                     action: str = policy.Action.REVIEW) -> BatchJob:
    """The batch with its model (and the model's dataset) loaded whole, if the user may do
    `action` on it: Http404 outside their projects, RoleRequired (403) below the role.

    The review reads the model's labels, thresholds and settings on every request.
    """
    return batch_selectors.batch_job_get(
        user=user, batch_id=batch_id, action=action,
        queryset=BatchJob.objects.select_related("ml_model__dataset"))


def review_queue(*, batch: BatchJob, show: str = "all") -> QuerySet[ReviewItem]:
    """The batch's articles, least certain first; `show` is one of FILTERS."""
    items = ReviewItem.objects.filter(batch=batch).order_by(*QUEUE_ORDER)
    if show == "todo":
        return items.filter(reviewed_labels__isnull=True)
    if show == "reviewed":
        return items.filter(reviewed_labels__isnull=False)
    return items


def review_item_get(*, batch: BatchJob, row: int) -> ReviewItem | None:
    item = ReviewItem.objects.filter(batch=batch, row=row).select_related("reviewer").first()
    if item is not None:
        item.batch = batch  # already loaded, with its model: no second fetch
    return item


def _after(item: ReviewItem) -> Q:
    return Q(uncertainty__lt=item.uncertainty) | Q(uncertainty=item.uncertainty, row__gt=item.row)


def _before(item: ReviewItem) -> Q:
    return Q(uncertainty__gt=item.uncertainty) | Q(uncertainty=item.uncertainty, row__lt=item.row)


def review_item_next(*, batch: BatchJob, after: ReviewItem | None = None,
                     unreviewed: bool = True) -> ReviewItem | None:
    """What to review next by uncertainty sampling: the least certain article not yet reviewed.

    With `after`, the next one down the queue from it, wrapping to the top, so confirming an
    article moves on instead of returning to one skipped a moment ago.
    """
    queue = review_queue(batch=batch, show="todo" if unreviewed else "all")
    if after is None:
        found = queue.first()
    else:
        found = queue.filter(_after(after)).exclude(pk=after.pk).first()
        if found is None and unreviewed:
            found = queue.exclude(pk=after.pk).first()
    if found is not None:
        found.batch = batch
    return found


def review_item_neighbours(*, item: ReviewItem) -> tuple[ReviewItem | None, ReviewItem | None]:
    """The articles just before and after this one in the queue (j/k on the page)."""
    queue = review_queue(batch=item.batch)
    before = queue.filter(_before(item)).order_by("uncertainty", "-row").first()
    return before, queue.filter(_after(item)).first()


def review_item_position(*, item: ReviewItem) -> int:
    """1-based place of the article in the queue."""
    return review_queue(batch=item.batch).filter(_before(item)).count() + 1


def review_suggestions(*, batch: BatchJob, limit: int = 5) -> list[ReviewItem]:
    """The articles to review next: the least certain ones nobody has reviewed."""
    return list(review_queue(batch=batch, show="todo")[:limit])


def review_thresholds(*, ml_model: MLModel) -> dict[str, float]:
    """Each label's decision threshold (multi-label): from the metrics, else the artifact."""
    names = list(ml_model.label_names or [])
    values = ((ml_model.metrics or {}).get("thresholds")
              or mlmodel_manifest(ml_model=ml_model).get("thresholds") or [])
    if not isinstance(values, list) or len(values) != len(names):
        return dict.fromkeys(names, uncertainty.DEFAULT_THRESHOLD)
    return {name: float(value) for name, value in zip(names, values, strict=True)}


def review_item_labels(*, item: ReviewItem, ml_model: MLModel,
                       thresholds: dict[str, float]) -> list[dict[str, Any]]:
    """One row per label for the page: its key, probability, the model's and the reviewer's say."""
    names = list(ml_model.label_names or [])
    wavering = uncertainty.label_uncertainties(
        probabilities=item.probabilities, labels=names, multi_label=ml_model.is_multilabel,
        thresholds=thresholds,
    )
    chosen = set(item.reviewed_labels if item.is_reviewed else item.predicted_labels)
    predicted = set(item.predicted_labels)
    rows = []
    for index, name in enumerate(names):
        probability = float(item.probabilities.get(name) or 0.0)
        rows.append({
            "name": name, "key": str(index + 1) if index < 9 else "",
            "pct": round(100 * probability), "probability": probability,
            "threshold_pct": round(100 * thresholds.get(name, 0.5)),
            "predicted": name in predicted, "checked": name in chosen,
            "wavering": wavering.get(name, 0.0) >= WAVERING,
        })
    return rows


def review_agreement(*, batch: BatchJob) -> dict[str, Any]:
    """How often the reviewers kept the model's labels: exactly, and label by label.

    Per label, `added` counts articles where the model gave the label and the reviewer took it
    away (a false positive), `missed` where the reviewer added one the model did not give.
    """
    labels = list(batch.ml_model.label_names or [])
    total = ReviewItem.objects.filter(batch=batch).count()
    pairs = list(review_queue(batch=batch, show="reviewed").values_list(
        "predicted_labels", "reviewed_labels"))
    per_label = {name: {"agree": 0, "added": 0, "missed": 0} for name in labels}
    exact = 0
    for predicted, reviewed in pairs:
        predicted, reviewed = set(predicted), set(reviewed)
        exact += predicted == reviewed
        for name, counts in per_label.items():
            said, kept = name in predicted, name in reviewed
            counts["agree" if said == kept else ("added" if said else "missed")] += 1
    reviewed_n = len(pairs)
    return {
        "total": total, "reviewed": reviewed_n, "todo": total - reviewed_n,
        "exact": exact, "corrected": reviewed_n - exact,
        "exact_share": exact / reviewed_n if reviewed_n else None,
        "per_label": [
            {"label": name, **counts,
             "share": counts["agree"] / reviewed_n if reviewed_n else None}
            for name, counts in per_label.items()
        ],
    }


def review_rounds(*, batch: BatchJob) -> QuerySet[ReviewRound]:
    return ReviewRound.objects.filter(batch=batch).select_related(
        "dataset", "training_job", "training_job__ml_model")
