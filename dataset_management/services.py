"""Writes for datasets: import an upload (atomically), delete one."""

from __future__ import annotations

import hashlib
import logging
import shutil
import sys
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from django.conf import settings
from django.db import transaction
from django.utils.text import get_valid_filename

from core import filestore
from core.diskspace import DiskFull, disk_full_refused, is_disk_full

from .articles import ArticleStream, articles_read
from .mapping import ColumnMapping, label_separator_detect, labels_parse, mapping_detect_stream
from .models import Dataset, dataset_upload_path
from .readers import ERROR_KEY, DatasetFileError, read_records
from .readers.base import cell_text
from .rows import JSON_COLUMNS, ROWS_SCHEMA, STAGING_SCHEMA, row_json
from .splitting import DEFAULT_RATIOS, SPLIT_ALIASES, SPLITS, split_assign, split_ratios_validate
from .validation import ReportBuilder

logger = logging.getLogger(__name__)

BATCH_ROWS = 5000
PREVIEW_ROWS = 10
PREVIEW_SAMPLE = 1000


@dataclass
class Preview:
    format: str
    encoding: str
    columns: list[str]
    mapping: dict[str, Any]
    rows: list[dict[str, Any]]
    report: dict[str, Any]
    details: dict[str, Any] = field(default_factory=dict)


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
    description: str = "",
    mapping: dict[str, Any] | None = None,
    split_ratios: tuple[float, float, float] = DEFAULT_RATIOS,
    seed: int = 42,
) -> Dataset:
    """Import a file into a new Dataset, or raise DatasetFileError and leave nothing behind
    (core.diskspace.DiskFull, likewise, when the disk fills while it is saved).

    `uploaded_file` is a Django UploadedFile or File (name, size, chunks()). `mapping` holds
    the overrides in mapping.OVERRIDE_KEYS.
    """
    try:
        ratios = split_ratios_validate(split_ratios)
    except ValueError as exc:
        raise DatasetFileError(str(exc)) from None
    _check_size(uploaded_file)
    filename = _safe_filename(uploaded_file.name)
    media = Path(settings.MEDIA_ROOT)
    workdir = media / "datasets" / f".incoming-{uuid.uuid4().hex}"
    with disk_full_refused():
        workdir.mkdir(parents=True)
    placed: list[Path] = []
    try:
        spooled = workdir / "upload"
        content_hash = _spool(uploaded_file, spooled)
        _check_not_duplicate(owner=owner, content_hash=content_hash)
        parsed = _parse(spooled, filename, mapping, workdir / "staging.parquet")
        dataset = Dataset(
            owner=owner, name=name, description=description, original_filename=filename,
            content_hash=content_hash, file_format=parsed.stream_format,
            encoding=parsed.encoding, split_seed=seed,
            split_ratios=dict(zip(SPLITS, ratios, strict=True)),
        )
        _finish(dataset, parsed, workdir, ratios=ratios, seed=seed)
        original_rel = dataset_upload_path(dataset, filename)
        rows_rel = f"datasets/{content_hash}/rows-{uuid.uuid4().hex[:12]}.parquet"
        with transaction.atomic():
            dataset.original_file.name = original_rel
            dataset.rows_path = rows_rel
            dataset.save()
            # Renames, not copies: same filesystem, so each is atomic and instant.
            (media / rows_rel).parent.mkdir(parents=True, exist_ok=True)
            _place(workdir / "rows.parquet", media / rows_rel, placed)
            if not (media / original_rel).exists():  # same bytes uploaded by another owner
                _place(spooled, media / original_rel, placed)
            # Published before the row commits, so no node ever reads a dataset it cannot open.
            for path in placed:
                filestore.file_publish(name=str(path.relative_to(media)))
    except BaseException as exc:
        for path in placed:
            path.unlink(missing_ok=True)
            filestore.file_delete(name=str(path.relative_to(media)))
        _remove_empty_dirs(media / "datasets" / locals().get("content_hash", "-"))
        # A full disk is the server's problem, not the file's: its own error (507, not 400),
        # raised only once the partial files above are gone (the workdir goes just below).
        if is_disk_full(exc):
            raise DiskFull() from exc
        raise
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    logger.info("Imported dataset %s (%s rows) from %s", dataset.pk, dataset.row_count, filename)
    return dataset


def dataset_preview(
    *, uploaded_file: Any, mapping_overrides: dict[str, Any] | None = None
) -> Preview:
    """Read the first rows only: detected format, encoding, mapping and a partial report."""
    import tempfile

    _check_size(uploaded_file)
    filename = _safe_filename(uploaded_file.name)
    with tempfile.TemporaryDirectory(prefix="medlitbot-preview-") as tmp:
        path = Path(tmp) / "upload"
        _spool(uploaded_file, path)
        with read_records(path, filename=filename) as stream:
            mapping = mapping_detect_stream(stream=stream, overrides=mapping_overrides)
            sample = []
            for _, record in stream.records:
                sample.append(record)
                if len(sample) >= PREVIEW_SAMPLE:
                    break
    raw = [r.get(mapping.label, "") for r in sample if mapping.label and ERROR_KEY not in r]
    separator = mapping.label_separator
    if separator is None:
        separator = label_separator_detect(raw_values=raw)
    rows, counts = [], {}
    for record in sample:
        if ERROR_KEY in record:
            continue
        labels = labels_parse(raw=record.get(mapping.label, ""), separator=separator,
                              label_map=mapping.label_map) if mapping.label else ()
        for label in labels:
            counts[label] = counts.get(label, 0) + 1
        if len(rows) < PREVIEW_ROWS:
            rows.append({
                "title": cell_text(record.get(mapping.title)) if mapping.title else "",
                "abstract": cell_text(record.get(mapping.abstract)),
                "labels": list(labels),
            })
    return Preview(
        format=stream.format, encoding=stream.encoding, columns=stream.columns,
        mapping=mapping.as_dict() | {"label_separator": separator}, rows=rows,
        report={"rows_sampled": len(sample), "label_counts_in_sample": counts,
                "multilabel": any(len(r["labels"]) > 1 for r in rows) or bool(separator)},
        details=stream.details,
    )


def dataset_delete(*, dataset: Dataset) -> None:
    """Delete the row now and its files once the deletion is committed."""
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
            _remove_empty_dirs(folder)

    with transaction.atomic():
        dataset.delete()
        transaction.on_commit(remove_files)


# --- the import pipeline -------------------------------------------------------------------------


def _parse(path: Path, filename: str, overrides: dict[str, Any] | None, staging: Path) -> _Parsed:
    """Pass one: stream records into a staging Parquet file, keeping only per-row facts."""
    with articles_read(path=path, filename=filename, overrides=overrides) as articles:
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
        if m.label and not has_label:
            builder.drop(row=row, reason="no label")
            continue
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
    if abstracts_seen == 0:
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
    separator = ""
    if m.label:
        separator = m.label_separator
        if separator is None:
            separator = label_separator_detect(raw_values=parsed.raw_labels)
        labels = _labels_parse_all(parsed.raw_labels, separator=separator, label_map=m.label_map)
        label_names = sorted({name for row in labels for name in row})
        if len(label_names) == 1:
            raise DatasetFileError(
                f"Only one label ('{label_names[0]}') found: a classifier needs at least two. "
                "Import the file as unlabelled to use it for prediction only."
            )
        position = {name: i for i, name in enumerate(label_names)}
        y = np.zeros((len(labels), len(label_names)), dtype=np.uint8)
        for i, row in enumerate(labels):
            y[i, [position[name] for name in row]] = 1
        if all(name.lstrip("-").isdigit() for name in label_names) and not m.label_map:
            builder.notes.append("Labels are numbers; give a label map to name them.")
    multilabel = labels is not None and any(len(row) > 1 for row in labels)
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
    report = builder.finish(labels=labels, label_names=label_names, label_matrix=y)
    report.update({
        "format": parsed.stream_format, "encoding": parsed.encoding,
        "encoding_detection": parsed.details.get("encoding_detection", ""),
        "delimiter": parsed.details.get("delimiter", ""), "columns": parsed.columns,
        "mapping": m.as_dict() | {"label_separator": separator},
        "label_separator": separator, "multilabel": multilabel,
        "split": split_info | {"sizes": sizes, "seed": seed,
                               "ratios": dict(zip(SPLITS, ratios, strict=True))},
    })
    _write_rows(workdir / "staging.parquet", workdir / "rows.parquet", labels, codes)
    dataset.text_fields = m.text_fields
    dataset.label_field = m.label or ""
    dataset.label_names = label_names
    dataset.is_multilabel = multilabel
    dataset.row_count = len(codes)
    dataset.label_counts = report.get("label_counts", {})
    dataset.split_sizes = sizes
    dataset.report = report


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


def _write_rows(staging: Path, target: Path, labels, codes: np.ndarray) -> None:
    # pre_buffer would fetch every row group ahead at once: a second copy of the whole file.
    source = pq.ParquetFile(staging, pre_buffer=False)
    start = 0
    with pq.ParquetWriter(target, ROWS_SCHEMA) as writer:
        for batch in source.iter_batches(batch_size=BATCH_ROWS):
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


# --- helpers -------------------------------------------------------------------------------------


def _check_size(uploaded_file: Any) -> None:
    size = getattr(uploaded_file, "size", None)
    if size is not None and size > settings.MAX_UPLOAD_SIZE:
        raise DatasetFileError(_too_big(size))


def _too_big(size: int) -> str:
    return (f"The file is {size / 2**20:.1f} MB; the limit is "
            f"{settings.MAX_UPLOAD_SIZE / 2**20:.0f} MB.")


def _safe_filename(name: str | None) -> str:
    """The user's file name without any directory part: it is shown, never used as a path."""
    base = (name or "").replace("\\", "/").rsplit("/", 1)[-1]
    try:
        return get_valid_filename(base)[:255]
    except Exception:  # SuspiciousFileOperation for "", "." and ".."
        return "upload"


def _spool(uploaded_file: Any, dest: Path) -> str:
    """Copy the upload to dest, hashing as it streams; enforce the size limit on real bytes."""
    digest = hashlib.sha256()
    written = 0
    if hasattr(uploaded_file, "seek"):
        uploaded_file.seek(0)
    with dest.open("wb") as out:
        for chunk in _chunks(uploaded_file):
            written += len(chunk)
            if written > settings.MAX_UPLOAD_SIZE:
                raise DatasetFileError(_too_big(written))
            digest.update(chunk)
            out.write(chunk)
    return digest.hexdigest()


def _chunks(uploaded_file: Any) -> Iterable[bytes]:
    if hasattr(uploaded_file, "chunks"):
        return uploaded_file.chunks(chunk_size=1 << 20)
    return iter(lambda: uploaded_file.read(1 << 20), b"")


def _check_not_duplicate(*, owner: Any, content_hash: str) -> None:
    existing = Dataset.objects.filter(owner=owner, content_hash=content_hash).first()
    if existing is not None:
        raise DatasetFileError(
            f"This file was already uploaded as dataset '{existing.name}' (id {existing.pk})."
        )


def _place(source: Path, target: Path, placed: list[Path]) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    source.replace(target)
    placed.append(target)


def _remove_empty_dirs(folder: Path) -> None:
    for path in (folder, folder.parent):
        try:
            path.rmdir()
        except OSError:
            return

