"""The first look at an upload: detected format, encoding, columns and a few rows.

It writes nothing (the file is read in a temporary folder), which is why it is not a service.
"""

from __future__ import annotations

import itertools
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .mapping import label_separator_detect, labels_parse, mapping_detect_stream
from .readers import ERROR_KEY, import_caps, read_records
from .readers.base import cell_text
from .readers.errors import DatasetFileError
from .unlabelled import labels_none_removed, no_label_count, no_label_summary
from .upload_files import check_size, chunks, safe_filename, spool

PREVIEW_ROWS = 10
PREVIEW_SAMPLE = 1000
# The preview reads at most this much of a text file (cut after a line end), so its cost stays
# the same whatever the file's size: the encoding scan and the copy read every byte they get
# (4 s for 250 MB here). PREVIEW_SAMPLE real records fit many times over; what lies beyond is
# checked by the import itself.
PREVIEW_HEAD_BYTES = 16 << 20
_ZIP_MAGIC = b"PK\x03\x04"


@dataclass
class Preview:
    format: str
    encoding: str
    columns: list[str]
    mapping: dict[str, Any]
    rows: list[dict[str, Any]]
    report: dict[str, Any]
    details: dict[str, Any] = field(default_factory=dict)



def dataset_preview(
    *, uploaded_file: Any, mapping_overrides: dict[str, Any] | None = None
) -> Preview:
    """Read the first rows only: detected format, encoding, mapping and a partial report."""
    check_size(uploaded_file)
    filename = safe_filename(uploaded_file.name)
    with tempfile.TemporaryDirectory(prefix="medlitbot-preview-") as tmp:
        path = Path(tmp) / "upload"
        cut = _spool_head(uploaded_file, path)
        with read_records(path, filename=filename, **import_caps()) as stream:
            mapping = mapping_detect_stream(stream=stream, overrides=mapping_overrides)
            sample = _sample(stream.records, cut=cut)
    raw = [r.get(mapping.label, "") for r in sample if mapping.label and ERROR_KEY not in r]
    separator = mapping.label_separator
    if separator is None:
        separator = label_separator_detect(raw_values=raw)
    parsed = [(record, labels_parse(raw=record.get(mapping.label, ""), separator=separator,
                                    label_map=mapping.label_map) if mapping.label else ())
              for record in sample if ERROR_KEY not in record]
    multilabel = any(len(labels) > 1 for _, labels in parsed) or bool(separator)
    no_label = no_label_summary(
        count=no_label_count(labels=[labels for _, labels in parsed],
                             other_means_none=mapping.other_means_none),
        multilabel=multilabel, mapping=mapping, sampled=True,
    ) if mapping.label else {}
    if multilabel:  # as import reads them: a label meaning "none" is no class
        kept = labels_none_removed(labels=[labels for _, labels in parsed],
                                   other_means_none=mapping.other_means_none)
        parsed = [(record, labels) for (record, _), labels in zip(parsed, kept, strict=True)]
    counts: Counter[str] = Counter(name for _, labels in parsed for name in labels)
    rows = [{"title": cell_text(record.get(mapping.title)) if mapping.title else "",
             "abstract": cell_text(record.get(mapping.abstract)), "labels": list(labels)}
            for record, labels in parsed[:PREVIEW_ROWS]]
    return Preview(
        format=stream.format, encoding=stream.encoding, columns=stream.columns,
        mapping=mapping.as_dict() | {"label_separator": separator}, rows=rows,
        report={"rows_sampled": len(sample), "label_counts_in_sample": dict(counts),
                "multilabel": multilabel, "no_label_rows": no_label},
        details=stream.details,
    )


def _spool_head(uploaded_file: Any, dest: Path) -> bool:
    """Copy the file's first PREVIEW_HEAD_BYTES to `dest`, cut after its last whole line; a
    workbook (a zip, whose directory is at its end) whole. True when the copy was cut."""
    if hasattr(uploaded_file, "seek"):
        uploaded_file.seek(0)
    pieces = iter(chunks(uploaded_file))
    first = next(pieces, b"")
    if first.startswith(_ZIP_MAGIC):
        spool(uploaded_file, dest)  # seeks back to the start; enforces the size limit
        return False
    written = 0
    with dest.open("wb") as out:
        for chunk in itertools.chain([first], pieces):
            if written + len(chunk) > PREVIEW_HEAD_BYTES:
                head = chunk[:PREVIEW_HEAD_BYTES - written]
                out.write(head[:head.rfind(b"\n") + 1] if b"\n" in head else head)
                return True
            out.write(chunk)
            written += len(chunk)
    return False


def _sample(records: Any, *, cut: bool) -> list[dict[str, Any]]:
    """The first PREVIEW_SAMPLE records. In a copy that was cut, the last record may be cut
    too: an error once some records were read ends the sample (the import reads the whole
    file and names any real problem there)."""
    sample: list[dict[str, Any]] = []
    try:
        for _, record in records:
            sample.append(record)
            if len(sample) >= PREVIEW_SAMPLE:
                break
    except DatasetFileError:
        if not (cut and sample):
            raise
    return sample
