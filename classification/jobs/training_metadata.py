"""The training job's metadata step: which fields the model reads beside the text, and the three
splits' texts with them (engine/metadata.py makes both; prediction adds the same fields the same
way from what the saved config records). A search or an ensemble gets each row's metadata beside
its plain text instead (engine/metadata_rows.py): they choose the form per model."""

from __future__ import annotations

from typing import Any

import pyarrow.parquet as pq

from classification import ml_models
from classification.engine import metadata
from classification.engine.metadata_rows import RowsWithMetadata
from classification.engine.schema import ALL_KINDS, ENSEMBLE, SEARCH

SPLITS = ("train", "validation", "test")


def split_metadata(*, dataset: Any, split: str, rows: int) -> list[dict[str, list[str]]]:
    """Each row's metadata fields, in the order dataset_split_examples reads the split (the
    same filter on the same file). A file from before the citation and record columns: none."""
    from dataset_management.rows import row_json_load
    from dataset_management.selectors import dataset_rows_file

    path = dataset_rows_file(dataset=dataset)
    columns = [c for c in ("citation", "record") if c in pq.ParquetFile(path).schema_arrow.names]
    if not columns:
        return [{} for _ in range(rows)]
    table = pq.read_table(path, columns=columns, filters=[("split", "=", split)])
    if table.num_rows != rows:
        raise RuntimeError(f"The {split} split has {rows} texts but {table.num_rows} metadata "
                           "rows: the dataset's rows file changed while it was read.")
    decoded = {c: table.column(c).to_pylist() for c in columns}
    return [metadata.metadata_extract(
        citation=row_json_load("citation", decoded["citation"][i]) if "citation" in decoded
        else None,
        record=row_json_load("record", decoded["record"][i]) if "record" in decoded else None,
    ) for i in range(rows)]


def _offered(*, dataset: Any, config: ml_models.TrainConfig,
             metas: list[list[dict[str, list[str]]]]) -> tuple[list[str], str]:
    """(the fields the metadata_fields setting resolves to on the training rows, the notes
    saying which fields the rows have and which one the labels came from)."""
    present = metadata.metadata_fields_present(metas[0])
    label_field = metadata.metadata_label_field(getattr(dataset, "label_field", ""))
    fields = metadata.metadata_fields_resolve(config.metadata_fields, present=present,
                                              exclude=[label_field] if label_field else [])
    notes = [f"in at least {metadata.MIN_SHARE:.0%} of the training rows: "
             f"{', '.join(metadata.SHOWN[f] for f in present) or 'none'}"]
    if label_field in present:
        notes.append(f"{metadata.SHOWN[label_field]} left out: the labels come from it")
    return fields, "; ".join(notes)


def _rows(splits: tuple[ml_models.TextData, ...], metas: list[list[dict[str, list[str]]]],
          fields: list[str]) -> tuple[RowsWithMetadata, ...]:
    return tuple(RowsWithMetadata(list(data.texts), [list(r) for r in data.labels], meta,
                                  list(fields)) for data, meta in zip(splits, metas, strict=True))


def splits_with_metadata(*, job: Any, config: ml_models.TrainConfig,
                         splits: tuple[ml_models.TextData, ...]) -> tuple[Any, str]:
    """(the splits as the model will read them, a line for the job's log). Sets the config's
    metadata_used and metadata_style, which the saved model keeps for prediction.

    A search or an ensemble gets the plain texts with each row's metadata beside them
    (engine/metadata_rows.py): a search's trials each compose them in their kind's form, and
    record it in their own config; an ensemble reads what its members read. Their log lines
    name what the winner or the ensemble used once it is known."""
    config.metadata_used, config.metadata_style = [], ""
    model_type, dataset = job.ml_model.model_type, job.ml_model.dataset
    kind = ml_models.get_spec(model_type).kind
    if kind not in (*ALL_KINDS, SEARCH, ENSEMBLE):
        return splits, f"metadata: text only (a {kind} job reads text only)"
    if kind != ENSEMBLE and (not config.metadata_fields or metadata.NONE in config.metadata_fields):
        return splits, "metadata: text only (metadata_fields: none)"
    metas = [split_metadata(dataset=dataset, split=name, rows=len(data))
             for name, data in zip(SPLITS, splits, strict=True)]
    if kind == ENSEMBLE:
        return _rows(splits, metas, []), ("metadata: the ensemble reads what its members read "
                                          "(said once they are loaded)")
    fields, notes = _offered(dataset=dataset, config=config, metas=metas)
    if not fields:
        return splits, f"metadata: text only ({notes})"
    shown = ", ".join(metadata.SHOWN[f] for f in fields)
    if kind == SEARCH:
        return _rows(splits, metas, fields), (
            f"metadata: {shown} offered to every trial, each in its kind's form (TF-IDF as "
            f"tokens, encoders as a prefix); the winner's is said at the end ({notes})")
    style = metadata.metadata_style(kind)
    config.metadata_used, config.metadata_style = fields, style
    composed = tuple(
        ml_models.TextData(metadata.texts_with_metadata(data.texts, meta, fields=fields,
                                                        style=style), data.labels)
        for data, meta in zip(splits, metas, strict=True))
    return composed, f"metadata: {shown} as {style} ({notes})"
