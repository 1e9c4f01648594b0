"""Writes for datasets: import an upload (atomically) into a project, move one, delete one."""

from __future__ import annotations

import itertools
import logging
import shutil
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from django.conf import settings
from django.db import transaction

from core import filestore
from core.diskspace import DiskFull, disk_full_refused, is_disk_full
from projects import policy
from projects.models import Project
from projects.services import ProjectError, activity_record, project_personal_id

from .articles import ArticleStream, articles_read
from .mapping import ColumnMapping, label_separator_detect, labels_parse
from .models import Dataset
from .placement import (
    actor_name,
    dataset_save_and_place,
    duplicate_refuse,
    empty_dirs_remove,
    placed_undo,
)
from .readers import DatasetFileError, import_caps
from .rows import JSON_COLUMNS, ROWS_SCHEMA, STAGING_SCHEMA, row_json
from .splitting import DEFAULT_RATIOS, SPLIT_ALIASES, SPLITS, split_assign, split_ratios_validate
from .unlabelled import unlabelled_rows_settle
from .upload_files import check_size, safe_filename, spool
from .validation import ReportBuilder

logger = logging.getLogger(__name__)

BATCH_ROWS = 5000


class ImportProgress(Protocol):  # an import job's (imports.py); what it raises undoes the import
    def attach(self, articles: ArticleStream) -> None: ...  # it follows the file's records


@dataclass
class _Parsed:
    """Pass one's result: rows on disk in staging, per-row facts in memory."""

    stream_format: str
    encoding: str
    columns: list[str]
    details: dict[str, Any]
    mapping: ColumnMapping
    builder: ReportBuilder
    raw_labels: list[Any]
    split_hints: list[str | None]


# --- public services ---------------------------------------------------------------------------


def dataset_create_from_upload(
    *,
    owner: Any,
    uploaded_file: Any,
    name: str,
    project: Project | int | None = None,
    description: str = "",
    mapping: dict[str, Any] | None = None,
    split_ratios: tuple[float, float, float] = DEFAULT_RATIOS,
    seed: int = 42,
    verb: str = "dataset_uploaded",
    progress: ImportProgress | None = None,
) -> Dataset:
    """Import a file into a new Dataset of `project`, or raise DatasetFileError and leave
    nothing behind (core.diskspace.DiskFull, likewise, when the disk fills while it is saved).

    `project` defaults to the owner's personal project. The doors (pages, API, CLI) check that
    the person may upload there; this import does not, because the review loop makes a dataset
    of a reviewer's corrections on purpose. `uploaded_file` is a Django UploadedFile or File
    (name, size, chunks()). `mapping` holds the overrides in mapping.OVERRIDE_KEYS. `verb` is
    the activity line: dataset_uploaded, or dataset_imported from the command line.
    """
    project_id = _project_id_for(owner=owner, project=project)
    try:
        ratios = split_ratios_validate(split_ratios)
    except ValueError as exc:
        raise DatasetFileError(str(exc)) from None
    check_size(uploaded_file)
    filename = safe_filename(uploaded_file.name)
    media = Path(settings.MEDIA_ROOT)
    workdir = media / "datasets" / f".incoming-{uuid.uuid4().hex}"
    with disk_full_refused():
        workdir.mkdir(parents=True)
    placed: list[Path] = []
    content_hash = ""
    try:
        spooled = workdir / "upload"
        content_hash = spool(uploaded_file, spooled)
        duplicate_refuse(project_id=project_id, content_hash=content_hash)
        parsed = _parse(spooled, filename, mapping, workdir / "staging.parquet", progress)
        dataset = Dataset(
            project_id=project_id, owner=owner, name=name, description=description,
            original_filename=filename, content_hash=content_hash,
            file_format=parsed.stream_format, encoding=parsed.encoding, split_seed=seed,
            split_ratios=dict(zip(SPLITS, ratios, strict=True)),
        )
        _finish(dataset, parsed, workdir, ratios=ratios, seed=seed)
        dataset_save_and_place(dataset, workdir=workdir, filename=filename, placed=placed,
                               verb=verb)
    except BaseException as exc:
        placed_undo(media=media, placed=placed, content_hash=content_hash)
        # A full disk is the server's problem, not the file's: its own error (507, not 400),
        # raised only once the partial files above are gone (the workdir goes just below).
        if is_disk_full(exc):
            raise DiskFull() from exc
        raise
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    logger.info("Imported dataset %s (%s rows) from %s", dataset.pk, dataset.row_count, filename)
    return dataset


def dataset_delete(*, dataset: Dataset, user: Any = None) -> None:
    """Delete the row now and its files once the deletion is committed.

    `user` must hold DELETE in the dataset's project; None is the system (admin, clean-ups).
    """
    if user is not None:
        policy.require(user=user, action=policy.Action.DELETE, obj=dataset)
    media = Path(settings.MEDIA_ROOT)
    rows = media / dataset.rows_path if dataset.rows_path else None
    original_name = dataset.original_file.name if dataset.original_file else ""
    original = media / original_name if original_name else None
    shared = Dataset.objects.filter(content_hash=dataset.content_hash).exclude(pk=dataset.pk)
    keep_original = bool(dataset.content_hash) and shared.exists()
    folder = media / "datasets" / dataset.content_hash if dataset.content_hash else None

    def remove_files() -> None:
        if rows:
            rows.unlink(missing_ok=True)
            filestore.file_delete(name=dataset.rows_path)
        if original and not keep_original:
            original.unlink(missing_ok=True)
            filestore.file_delete(name=original_name)
        if folder:
            empty_dirs_remove(folder)

    with transaction.atomic():
        activity_record(project=dataset.project_id, actor=user, verb="dataset_deleted",
                        summary=f"{actor_name(user)} deleted dataset “{dataset.name}”",
                        subject=dataset, name=dataset.name)
        dataset.delete()
        transaction.on_commit(remove_files)


def dataset_move(*, user: Any, dataset: Dataset, project: Project) -> Dataset:
    """Move the dataset, the models trained on it and their batches to another project.

    Jobs and reviews follow (they reach their project through the model and the batch). The
    user must be a maintainer of both projects: MOVE where it is, UPLOAD where it goes.
    """
    from classification.models import BatchJob, EvaluationJob, MLModel

    policy.require(user=user, action=policy.Action.MOVE, obj=dataset)
    policy.require(user=user, action=policy.Action.UPLOAD, project=project)
    source_id = dataset.project_id
    if source_id == project.pk:
        raise ProjectError(f"Dataset “{dataset.name}” is already in “{project.name}”.")
    with transaction.atomic():
        source = Project.objects.select_for_update().get(pk=source_id)
        # Only the models in the dataset's own project: a model elsewhere is not this
        # user's to move.
        models = MLModel.objects.filter(dataset=dataset, project_id=source_id)
        model_ids = list(models.values_list("pk", flat=True))
        batches = BatchJob.objects.filter(ml_model_id__in=model_ids, project_id=source_id)
        moved = {"models": len(model_ids), "batches": batches.update(project=project)}
        # An evaluation belongs to its model's project: left behind, it would hold the old
        # project (its deletion refused) for a model nobody there can see any more.
        EvaluationJob.objects.filter(ml_model_id__in=model_ids, project_id=source_id).update(
            project=project)
        models.update(project=project)
        Dataset.objects.filter(pk=dataset.pk).update(project=project)
        dataset.project = project
        what = (f"dataset “{dataset.name}” with {moved['models']} model(s) and "
                f"{moved['batches']} batch(es)")
        activity_record(project=source, actor=user, verb="dataset_moved", subject=dataset,
                        summary=f"{actor_name(user)} moved {what} to “{project.name}”",
                        to_project=project.pk, **moved)
        activity_record(project=project, actor=user, verb="dataset_moved", subject=dataset,
                        summary=f"{actor_name(user)} moved {what} here from “{source.name}”",
                        from_project=source.pk, **moved)
    logger.info("Moved dataset %s from project %s to %s (%s)", dataset.pk, source_id,
                project.pk, moved)
    return dataset


def _project_id_for(*, owner: Any, project: Project | int | None) -> int:
    """The project a new dataset joins: the one asked for, else its owner's personal one."""
    project_id = getattr(project, "pk", project)
    if project_id is None:
        project_id = project_personal_id(user_id=getattr(owner, "pk", None))
    if project_id is None:  # no row belongs to nobody
        raise ProjectError("A dataset needs a project or an owner whose project it joins.")
    return project_id


# --- the import pipeline -------------------------------------------------------------------------


def _parse(path: Path, filename: str, overrides: dict[str, Any] | None, staging: Path,
           progress: ImportProgress | None = None) -> _Parsed:
    """Pass one: stream records into a staging Parquet file, keeping only per-row facts."""
    with articles_read(path=path, filename=filename, overrides=overrides,
                       **import_caps()) as articles:
        if progress is not None:
            progress.attach(articles)
        parsed = _Parsed(articles.format, articles.encoding, articles.columns, articles.details,
                         articles.mapping, ReportBuilder(), [], [])
        with pq.ParquetWriter(staging, STAGING_SCHEMA) as writer:
            _stream_rows(articles, parsed, writer)
    return parsed


def _stream_rows(articles: ArticleStream, parsed: _Parsed, writer: pq.ParquetWriter) -> None:
    m, builder = parsed.mapping, parsed.builder
    batch: dict[str, list[str | None]] = {name: [] for name in STAGING_SCHEMA.names}
    abstracts_seen = labels_seen = 0
    for article in articles:
        row = article.row
        builder.rows_read += 1
        if article.unreadable:
            builder.drop(row=row, reason=f"wrong shape: {article.problem.split(',')[0]}")
            continue
        abstracts_seen += bool(article.abstract)
        raw_label = article.raw_labels
        has_label = bool(raw_label if isinstance(raw_label, list) else str(raw_label).strip())
        labels_seen += has_label
        hint = None
        if m.split:
            hint = SPLIT_ALIASES.get(article.split.strip().lower())
            if hint is None:
                builder.drop(row=row, reason="unknown split value")
                continue
        if not article.text:
            builder.drop(row=row, reason="empty text")
            continue
        # A row without a label stays until the whole file says what it is (unlabelled.py).
        builder.keep(row=row, text=article.text)
        # Label cells repeat a handful of values across millions of rows: keep one copy of each.
        parsed.raw_labels.append(sys.intern(raw_label) if isinstance(raw_label, str) else raw_label)
        parsed.split_hints.append(hint)
        for name, value in zip(STAGING_SCHEMA.names, (article.title, article.abstract,
                                                      article.text, *row_json(article)),
                               strict=True):
            batch[name].append(value)
        if len(batch["text"]) >= BATCH_ROWS:
            writer.write_batch(pa.record_batch(batch, schema=STAGING_SCHEMA))
            batch = {k: [] for k in batch}
    if batch["text"]:
        writer.write_batch(pa.record_batch(batch, schema=STAGING_SCHEMA))
    if builder.rows_read == 0:
        raise DatasetFileError("The file has a header but no data rows.")
    if abstracts_seen == 0 and not parsed.details.get("no_abstract"):  # counted: kept
        raise DatasetFileError(f"The text column '{m.abstract}' is empty in every row.")
    if m.label and labels_seen == 0:
        raise DatasetFileError(
            f"The label column '{m.label}' is empty in every row; import the file as unlabelled "
            "to use it for prediction only."
        )
    if not parsed.raw_labels:
        reasons = ", ".join(builder.dropped)
        raise DatasetFileError(f"No usable rows: all {builder.rows_read} were dropped ({reasons}).")


def _finish(dataset: Dataset, parsed: _Parsed, workdir: Path, *, ratios, seed: int) -> None:
    """Pass two: labels, report and split decided in memory, then the final Parquet written."""
    m, builder = parsed.mapping, parsed.builder
    labels: list[tuple[str, ...]] | None = None
    label_names: list[str] = []
    y: np.ndarray | None = None
    separator, multilabel, keep, settled = "", False, None, None
    if m.label:
        separator = m.label_separator
        if separator is None:
            separator = label_separator_detect(raw_values=parsed.raw_labels)
        labels = _labels_parse_all(parsed.raw_labels, separator=separator, label_map=m.label_map)
        settled = unlabelled_rows_settle(labels=labels, mapping=m, builder=builder)
        labels, multilabel, keep = settled.labels, settled.multilabel, settled.keep
        if keep is not None:
            parsed.split_hints = list(itertools.compress(parsed.split_hints, keep.tolist()))
        label_names = sorted({name for row in labels for name in row})
        if len(label_names) == 1:
            raise DatasetFileError(
                f"Only one label ('{label_names[0]}') found: a classifier needs at least two. "
                "Import the file as unlabelled to use it for prediction only."
            )
        y = _label_matrix(labels, label_names)
        if all(name.lstrip("-").isdigit() for name in label_names) and not m.label_map:
            builder.notes.append("Labels are numbers; give a label map to name them.")
    hints = parsed.split_hints
    if m.split:
        codes = np.array([SPLITS.index(h) for h in hints], dtype=np.int8)
        split_info = {"method": f"from column '{m.split}'",
                      "notes": _straddling_notes(builder.groups(), codes)}
    else:
        result = split_assign(
            label_matrix=y if y is not None else np.zeros((len(hints), 0), dtype=np.uint8),
            multilabel=multilabel, ratios=ratios, seed=seed, groups=builder.groups(),
        )
        codes = result.codes
        split_info = {"method": result.method, "notes": result.notes}
    sizes = {name: int(n) for name, n in zip(SPLITS, np.bincount(codes, minlength=3),
                                             strict=True)}
    builder.notes.extend(parsed.details.get("notes") or ())  # the reader's (PubMed XML's)
    report = builder.finish(labels=labels, label_names=label_names, label_matrix=y)
    report.update({
        "format": parsed.stream_format, "encoding": parsed.encoding,
        "encoding_detection": parsed.details.get("encoding_detection", ""),
        "delimiter": parsed.details.get("delimiter", ""), "columns": parsed.columns,
        "mapping": m.as_dict() | {"label_separator": separator},
        "label_separator": separator, "multilabel": multilabel,
        "no_label_rows": settled.summary if settled else {},
        "split": split_info | {"sizes": sizes, "seed": seed,
                               "ratios": dict(zip(SPLITS, ratios, strict=True))},
    })
    _write_rows(workdir / "staging.parquet", workdir / "rows.parquet", labels, codes, keep)
    dataset.text_fields = m.text_fields
    dataset.label_field = m.label or ""
    dataset.label_names = label_names
    dataset.is_multilabel = multilabel
    dataset.row_count = len(codes)
    dataset.label_counts = report.get("label_counts", {})
    dataset.split_sizes = sizes
    dataset.report = report


def _label_matrix(labels: list[tuple[str, ...]], label_names: list[str]) -> np.ndarray:
    """Row x label 0/1; a row without a label (kept in a multi-label dataset) is all zeros."""
    position = {name: i for i, name in enumerate(label_names)}
    y = np.zeros((len(labels), len(label_names)), dtype=np.uint8)
    for i, row in enumerate(labels):
        y[i, [position[name] for name in row]] = 1
    return y


def _straddling_notes(groups: np.ndarray, codes: np.ndarray) -> list[str]:
    """The file chose the splits: say how many repeated texts it put in two splits at once."""
    splits_per_group: dict[int, set[int]] = {}
    for group, code in zip(groups.tolist(), codes.tolist(), strict=True):
        splits_per_group.setdefault(group, set()).add(code)
    straddling = sum(len(found) > 1 for found in splits_per_group.values())
    if not straddling:
        return []
    return [f"{straddling} text(s) appear in more than one of the file's splits (ignoring "
            "case, spacing and punctuation): test scores on them measure memory, not skill."]


def _labels_parse_all(
    raw_labels: list[Any], *, separator: str, label_map: dict[str, str]
) -> list[tuple[str, ...]]:
    """Parse each distinct cell once; rows with equal cells share one tuple."""
    parsed: dict[Any, tuple[str, ...]] = {}
    out = []
    for raw in raw_labels:
        key = tuple(map(str, raw)) if isinstance(raw, list) else str(raw)
        labels = parsed.get(key)
        if labels is None:
            labels = tuple(sys.intern(name) for name in
                           labels_parse(raw=raw, separator=separator, label_map=label_map))
            parsed[key] = labels
        out.append(labels)
    return out


def _write_rows(staging: Path, target: Path, labels, codes: np.ndarray,
                keep: np.ndarray | None = None) -> None:
    """The final rows: staging's, less those `keep` (per staged row) drops."""
    # pre_buffer would fetch every row group ahead at once: a second copy of the whole file.
    source = pq.ParquetFile(staging, pre_buffer=False)
    start = staged = 0
    with pq.ParquetWriter(target, ROWS_SCHEMA) as writer:
        for batch in source.iter_batches(batch_size=BATCH_ROWS):
            if keep is not None:
                staged, part = staged + batch.num_rows, keep[staged:staged + batch.num_rows]
                batch = batch.filter(pa.array(part))
            n = batch.num_rows
            stop = start + n
            writer.write_batch(pa.record_batch({
                "row_id": pa.array(range(start, stop), pa.int64()),
                "title": batch.column("title"),
                "abstract": batch.column("abstract"),
                "text": batch.column("text"),
                "labels": pa.array([list(r) for r in labels[start:stop]] if labels else
                                   [[] for _ in range(n)], pa.list_(pa.string())),
                "split": pa.array([SPLITS[c] for c in codes[start:stop]], pa.string()),
                **{name: batch.column(name) for name in JSON_COLUMNS},
            }, schema=ROWS_SCHEMA))
            start = stop
