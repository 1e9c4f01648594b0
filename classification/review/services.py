"""Review writes: copy a batch's predictions into review items, record corrections, turn them into
a dataset and start a retraining from it.

The dataset goes through dataset_management's own import (dataset_create_from_upload), fed a
JSON Lines file written here, so the Parquet rows, the report and the split are made the one way
every dataset is made. It joins the batch's project.

Each write asks projects.policy (reviewing needs the reviewer role in the batch's project,
retraining the maintainer's too) and records its line in the project's activity log.
"""

from __future__ import annotations

import csv
import hashlib
import json
import logging
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from django.core.files import File
from django.db import transaction
from django.utils import timezone

from classification import services as classification_services
from classification.batches import selectors as batch_selectors
from classification.engine.types import article_text
from classification.models import BatchJob, MLModel
from classification.review import selectors, uncertainty
from classification.review.models import ReviewItem, ReviewRound
from dataset_management.export import csv_safe_cell
from dataset_management.models import Dataset
from projects import policy
from projects.services import activity_record

logger = logging.getLogger(__name__)

INSERT_CHUNK = 500
# The corrections always teach: they go to the training split, so the retrained model is
# scored on the same validation and test rows as the model it replaces.
CORRECTIONS_SPLIT = "train"


class ReviewError(ValueError):
    """The review cannot do that; the message is for the person."""


# --- items ---------------------------------------------------------------------------------


def review_items_ensure(*, batch: BatchJob) -> int:
    """Create the batch's review items from its result CSV, once; the number of items.

    Idempotent and safe against two first opens at once: the unique (batch, row) constraint and
    ignore_conflicts make a second copy a no-op, inside one transaction so a half-read file
    leaves no items.
    """
    existing = ReviewItem.objects.filter(batch=batch).count()
    if existing:
        return existing
    path = batch_selectors.batch_job_result_file(batch=batch)
    if path is None:
        raise ReviewError("There is nothing to review until the batch has completed.")
    ml_model = batch.ml_model
    labels = list(ml_model.label_names or [])
    thresholds = selectors.review_thresholds(ml_model=ml_model)
    with transaction.atomic(), path.open(encoding="utf-8-sig", newline="") as handle:
        chunk: list[ReviewItem] = []
        for record in _result_rows(handle):
            probabilities = {name: record["p"][name] for name in labels if name in record["p"]}
            chunk.append(ReviewItem(
                batch=batch, row=record["row"], article_id=record["id"][:255],
                title=record["title"], abstract=record["abstract"],
                predicted_labels=[n for n in record["labels"] if n in labels],
                probabilities=probabilities,
                uncertainty=uncertainty.uncertainty_score(
                    probabilities=probabilities, labels=labels,
                    multi_label=ml_model.is_multilabel, thresholds=thresholds),
            ))
            if len(chunk) >= INSERT_CHUNK:
                ReviewItem.objects.bulk_create(chunk, ignore_conflicts=True)
                chunk = []
        ReviewItem.objects.bulk_create(chunk, ignore_conflicts=True)
    return ReviewItem.objects.filter(batch=batch).count()


def _unsafe(cell: str) -> str:
    """Undo csv_safe_cell: the apostrophe it put before a formula-like cell is not the data."""
    if cell.startswith("'") and csv_safe_cell(cell[1:]) == cell:
        return cell[1:]
    return cell


def _result_rows(handle: IO[str]) -> Iterator[dict[str, Any]]:
    """The classified rows of a batch CSV (docs/contracts.md); skipped rows have nothing to
    review."""
    reader = csv.reader(handle)
    header = [_unsafe(h) for h in next(reader, [])]
    where = {name: i for i, name in enumerate(header)}
    prob_columns = {name[2:]: i for name, i in where.items() if name.startswith("p_")}
    for cells in reader:
        def cell(name: str, cells: list[str] = cells) -> str:
            i = where.get(name)
            return _unsafe(cells[i]) if i is not None and i < len(cells) else ""

        if cell("note").startswith("skipped") or not cell("row").isdigit():
            continue
        probabilities = {}
        for name, i in prob_columns.items():
            try:
                probabilities[name] = float(cells[i])
            except (ValueError, IndexError):
                continue
        yield {
            "row": int(cell("row")), "id": cell("id"), "title": cell("title"),
            "abstract": cell("abstract"),
            "labels": [n for n in cell("predicted_labels").split("|") if n],
            "p": probabilities,
        }


def review_item_correct(*, item: ReviewItem, reviewer: Any, labels: list[str]) -> ReviewItem:
    """Record what the reviewer says the article's labels are (the model's own: a confirmation).

    Single-label models take exactly one label, multi-label models at least one: an article
    without any label could not be trained on. RoleRequired unless `reviewer` may review in the
    batch's project. Each decision is one line of the activity log.
    """
    batch = item.batch
    policy.require(user=reviewer, action=policy.Action.REVIEW, obj=batch)
    ml_model = batch.ml_model
    known = list(ml_model.label_names or [])
    chosen = set(labels)
    unknown = sorted(chosen - set(known))
    if unknown:
        raise ReviewError(f"Not a label of this model: {', '.join(unknown)}.")
    if not chosen:
        raise ReviewError("Choose at least one label.")
    if not ml_model.is_multilabel and len(chosen) != 1:
        raise ReviewError("This model gives each article exactly one label: choose one.")
    item.reviewed_labels = [name for name in known if name in chosen]
    item.reviewer = reviewer
    item.reviewed_at = timezone.now()
    with transaction.atomic():
        item.save(update_fields=["reviewed_labels", "reviewer", "reviewed_at"])
        _decision_record(item=item, batch=batch, reviewer=reviewer)
    return item


def _decision_record(*, item: ReviewItem, batch: BatchJob, reviewer: Any) -> None:
    """One line per decision, naming the article's row (and its id and title, if it has them)."""
    article = f"row {item.row}" + (f" ({item.article_id})" if item.article_id else "")
    if item.title:
        article += f" “{item.title[:80]}”"
    labels = ", ".join(item.reviewed_labels)
    what = (f"confirmed {labels} for {article}" if item.is_confirmed else
            f"corrected {article} from {', '.join(item.predicted_labels) or 'no label'} "
            f"to {labels}")
    activity_record(
        project=batch.project_id, actor=reviewer, verb="review_decision", subject=item,
        summary=f"{reviewer.get_username()} {what} in “{batch.filename}”",
        batch=batch.pk.hex, row=item.row, labels=list(item.reviewed_labels),
        predicted=list(item.predicted_labels), confirmed=item.is_confirmed,
    )


# --- dataset and retraining -------------------------------------------------------------


def review_dataset_create(*, batch: BatchJob, user: Any,
                          include_training_data: bool = True) -> ReviewRound:
    """Make a labelled dataset of the reviewed articles, in the batch's project; the round that
    records it.

    With `include_training_data`, the rows of the dataset the batch's model learned from come
    too, in their own splits (an article the reviewers labelled replaces a row with the same
    text), so the new model learns from the corrections on top of what it knew. The same
    corrections twice give the same file, and so the dataset already made from them. Making it
    is part of reviewing (RoleRequired below the reviewer role in the batch's project).
    """
    policy.require(user=user, action=policy.Action.REVIEW, obj=batch)
    ml_model = batch.ml_model
    reviewed = list(selectors.review_queue(batch=batch, show="reviewed").order_by("row"))
    if not reviewed:
        raise ReviewError("Review at least one article first.")
    source = ml_model.dataset if include_training_data else None
    if source is not None and (not source.rows_path or not policy.can(
            user=user, action=policy.Action.VIEW, obj=source)):
        source = None  # rows the person may not read never reach a dataset they make
    with tempfile.TemporaryDirectory(prefix="medlitbot-review-") as tmp:
        path = Path(tmp) / f"reviewed-{batch.pk.hex[:8]}.jsonl"
        digest, training_rows = _write_jsonl(path, reviewed=reviewed, source=source)
        dataset = Dataset.objects.filter(project_id=batch.project_id,
                                         content_hash=digest).first()
        if dataset is None:
            dataset = _dataset_import(path, batch=batch, user=user, ml_model=ml_model,
                                      reviewed=len(reviewed), source=source,
                                      training_rows=training_rows)
    return ReviewRound.objects.create(batch=batch, created_by=user, dataset=dataset,
                                      corrections=len(reviewed), training_rows=training_rows)


def _write_jsonl(path: Path, *, reviewed: list[ReviewItem],
                 source: Dataset | None) -> tuple[str, int]:
    """Write the rows; the file's sha256 (the importer's content hash) and the source rows kept."""
    corrected = {article_text(i.title, i.abstract) for i in reviewed}
    digest = hashlib.sha256()
    kept = 0
    with path.open("wb") as out:
        def write(record: dict[str, Any]) -> None:
            line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
            digest.update(line)
            out.write(line)

        for row in _source_rows(source):
            if row["text"] in corrected:
                continue
            write({"title": row["title"], "abstract": row["abstract"],
                   "labels": list(row["labels"]), "split": row["split"]})
            kept += 1
        for item in reviewed:
            record = {"title": item.title, "abstract": item.abstract,
                      "labels": list(item.reviewed_labels)}
            if source is not None:
                record["split"] = CORRECTIONS_SPLIT
            write(record)
    return digest.hexdigest(), kept


def _source_rows(source: Dataset | None) -> Iterator[dict[str, Any]]:
    if source is None:
        return
    import pyarrow.parquet as pq

    from dataset_management.selectors import dataset_rows_file

    path = dataset_rows_file(dataset=source)
    if not path.is_file():
        raise ReviewError(f"The rows of dataset '{source.name}' are missing on disk; "
                          "make the dataset without the model's training data.")
    columns = ["title", "abstract", "text", "labels", "split"]
    for chunk in pq.ParquetFile(path, pre_buffer=False).iter_batches(columns=columns,
                                                                     batch_size=5000):
        yield from chunk.to_pylist()


def _dataset_import(path: Path, *, batch: BatchJob, user: Any, ml_model: MLModel,
                    reviewed: int, source: Dataset | None, training_rows: int) -> Dataset:
    from dataset_management.readers import DatasetFileError
    from dataset_management.services import dataset_create_from_upload

    stem = Path(batch.filename).stem[:80] or "articles"
    description = (f"{reviewed} article(s) of {batch.filename} reviewed after classification "
                   f"by {ml_model.name}")
    if source is not None:
        description += f", with {training_rows} row(s) of {source.name}"
    mapping = {"title_column": "title", "abstract_column": "abstract", "label_column": "labels"}
    if source is not None:
        mapping["split_column"] = "split"
    try:
        with path.open("rb") as handle:
            return dataset_create_from_upload(
                owner=user, project=batch.project_id, uploaded_file=File(handle, name=path.name),
                name=f"{stem} reviewed ({reviewed})"[:200], description=description + ".",
                mapping=mapping,
            )
    except DatasetFileError as exc:
        raise ReviewError(f"The corrections could not become a dataset: {exc}") from None


def review_retrain_start(*, batch: BatchJob, user: Any,
                         include_training_data: bool = True) -> ReviewRound:
    """One click: the corrections become a dataset and a model like the batch's trains on it.

    Same model type and the same settings (MLModel.parameters) as the model that classified the
    batch. A broker outage raises core.queueing.QueueUnavailable after the job has been failed
    with the reason, like any training start; the round keeps its dataset either way. Training
    needs the maintainer role in the batch's project: asked before the dataset is made, so a
    refusal leaves nothing half done.
    """
    policy.require(user=user, action=policy.Action.TRAIN, obj=batch)
    ml_model = batch.ml_model
    round_ = review_dataset_create(batch=batch, user=user,
                                   include_training_data=include_training_data)
    name = f"{ml_model.name} + {round_.corrections} reviewed"[:200]
    try:
        job = classification_services.training_job_create(
            owner=user, dataset=round_.dataset, model_type=ml_model.model_type, name=name,
            config=dict(ml_model.parameters or {}), verb="review_retrain",
            summary=f"{user.get_username()} retrained “{ml_model.name}” with "
                    f"{round_.corrections} reviewed article(s) of “{batch.filename}” "
                    f"as “{name}”",
        )
    except ValueError as exc:
        raise ReviewError(f"The retraining could not start: {exc}") from None
    round_.training_job = job
    round_.save(update_fields=["training_job"])
    logger.info("review of batch %s: retraining job %s on dataset %s", batch.pk.hex, job.pk,
                round_.dataset_id)
    return round_
