"""The first look at an upload: detected format, encoding, columns and a few rows.

It writes nothing (the file is read in a temporary folder), which is why it is not a service.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .mapping import label_separator_detect, labels_parse, mapping_detect_stream
from .readers import ERROR_KEY, import_caps, read_records
from .readers.base import cell_text
from .upload_files import check_size, safe_filename, spool

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



def dataset_preview(
    *, uploaded_file: Any, mapping_overrides: dict[str, Any] | None = None
) -> Preview:
    """Read the first rows only: detected format, encoding, mapping and a partial report."""
    check_size(uploaded_file)
    filename = safe_filename(uploaded_file.name)
    with tempfile.TemporaryDirectory(prefix="medlitbot-preview-") as tmp:
        path = Path(tmp) / "upload"
        spool(uploaded_file, path)
        with read_records(path, filename=filename, **import_caps()) as stream:
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
