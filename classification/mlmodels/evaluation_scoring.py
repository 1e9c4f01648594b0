"""Scoring a trained model on a labelled file: the one code path of the evaluation job (on the
inference worker), `manage.py evaluate` and the synchronous service.

The rows are scored in chunks of CHUNK_ROWS, and `on_progress(message, done, total)` is called
before the file is read and after every chunk, so a caller can show progress and stop the work
between two chunks by raising from it. The metrics are computed once, over every row's
probabilities, exactly as ``BaseClassifier.evaluate`` computes them.
"""

from __future__ import annotations

import shutil
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from classification import ml_models
from classification.mlmodels.evaluation import EvaluationColumns, mlmodel_evaluation_columns
from classification.mlmodels.overlap import evaluation_overlap
from classification.mlmodels.prediction import (
    ParsedFile,
    _classifier,
    mlmodel_texts,
    parse_articles_file,
)
from classification.models import MLModel

# Small enough that a transformer on a CPU reports every few seconds, large enough that TF-IDF
# pays nothing for it.
CHUNK_ROWS = 256
MESSAGE_READING = "reading the file"
MESSAGE_SCORING = "scoring rows"
MESSAGE_OVERLAP = "looking for rows of the model's training data"

Progress = Callable[[str, int, int | None], None]


def _no_progress(message: str, done: int, total: int | None) -> None:
    return None


def mlmodel_evaluate_file(
    *,
    ml_model: MLModel,
    path: str | Path,
    filename: str | None = None,
    overrides: dict[str, Any] | None = None,
    columns: EvaluationColumns | None = None,
    on_progress: Progress | None = None,
    chunk_rows: int = CHUNK_ROWS,
) -> dict[str, Any]:
    """The model's metrics on a labelled file, its columns mapped as import maps them (the
    model's own training mapping first: see mlmodels.evaluation). `overrides` takes title_column,
    abstract_column or text_column, label_column and label_separator; `columns`, a preview
    already made of this file with them, saves reading it again.

    The result adds `columns` (role -> column and where it came from), `unknown_labels`
    ({label: rows}), the rows left out (`rows_unknown_labels_only`, `rows_without_labels`,
    `rows_dropped`: no text), `rows_scored` of `rows_total` with the rows not scored named
    (`rows_not_scored`, rows_counted) and `training_overlap` (mlmodels.overlap). ValueError or
    DatasetFileError when there is nothing to score. `on_progress` and `chunk_rows`: see the
    module's docstring.
    """
    report = on_progress or _no_progress
    if columns is None:
        columns = mlmodel_evaluation_columns(ml_model=ml_model, path=path, filename=filename,
                                             overrides=overrides)
    problem = columns.problem(text_option="the abstract or text column option",
                              label_option="the label column option")
    if problem:
        raise ValueError(problem)
    report(MESSAGE_READING, 0, None)
    parsed = parse_articles_file(path, filename=columns.filename, mapping=columns.mapping)
    metrics = _evaluate(ml_model, parsed, report, chunk_rows=max(1, chunk_rows))
    # Rows the model was trained or validated on flatter its scores: counted for every caller.
    report(MESSAGE_OVERLAP, metrics["n"], metrics["n"])
    overlap = evaluation_overlap(ml_model=ml_model, texts=parsed.texts)
    return metrics | {"columns": columns.as_dict(), "training_overlap": overlap}


def mlmodel_evaluate_upload(
    *, ml_model: MLModel, uploaded_file: Any, overrides: dict[str, Any] | None = None
) -> dict[str, Any]:
    """mlmodel_evaluate_file on an upload, spooled to a temporary folder for the readers."""
    folder = Path(tempfile.mkdtemp(prefix="medlitbot-evaluate-"))
    try:
        name = Path(getattr(uploaded_file, "name", "") or "upload").name
        with (folder / name).open("wb") as out:
            for chunk in uploaded_file.chunks():
                out.write(chunk)
        return mlmodel_evaluate_file(ml_model=ml_model, path=folder / name, filename=name,
                                     overrides=overrides)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# How many unscored rows a result names one by one (all are counted).
NAMED_ROWS = 20


def _truth(known: set[str], parsed: ParsedFile, *, multi_label: bool) -> _Truth:
    """Each row's labels that the model knows, and the rows that cannot be scored, by why.

    A multi-label row without a label is scored (right when the model gives none); a
    single-label one is not (it has no class to be right about), nor is a row whose labels are
    all unknown to the model."""
    from dataset_management.readers.errors import names_listed
    from dataset_management.unlabelled import NONE_LABELS

    out = _Truth()
    for position, row in enumerate(parsed.labels):
        if multi_label:  # as its import read them: "none" is no label, not an unknown one
            row = [label for label in row if label not in NONE_LABELS]
        kept = [label for label in row if label in known]
        missing = [label for label in row if label not in known]
        out.unknown.update(missing)
        out.without_labels += not row and not multi_label  # left out
        out.no_label_scored += not row and multi_label
        out.unknown_only += bool(row) and not kept
        if kept or (multi_label and not row):
            out.scored.append(position)
            out.truth.append(kept)
        else:
            why = ("only labels the model does not know: " + names_listed(missing) if row
                   else "no label")
            out.unscored.append((_row_of(parsed, position), why))
    out.unscored += parsed.problems
    out.unscored.sort()
    return out


def _row_of(parsed: ParsedFile, position: int) -> int:
    return parsed.rows[position] if position < len(parsed.rows) else position + 1


@dataclass
class _Truth:
    scored: list[int] = field(default_factory=list)  # positions in parsed.texts
    truth: list[list[str]] = field(default_factory=list)
    unknown: Counter[str] = field(default_factory=Counter)
    unscored: list[tuple[int, str]] = field(default_factory=list)  # (file row, why)
    without_labels: int = 0
    no_label_scored: int = 0
    unknown_only: int = 0


def _evaluate(ml_model: MLModel, parsed: ParsedFile, report: Progress, *,
              chunk_rows: int) -> dict[str, Any]:
    """Score every row that can be scored; name and count the rest.

    A label the model never saw cannot be predicted, so it is taken out of its row's truth
    (and counted) rather than scored as a miss on every row; a row left with no label it knows
    is not scored, and is named with why. `rows_scored` of `rows_total` says how many counted.
    """
    from dataset_management.readers.errors import names_listed

    clf = _classifier(ml_model)
    found = _truth(set(clf.label_names), parsed, multi_label=bool(clf.multi_label))
    if not any(found.truth):
        if found.unknown:
            raise ValueError(
                f"None of the file's labels ({names_listed(sorted(found.unknown))}) is one the "
                f"model knows ({names_listed(clf.label_names)}): is the label column the right "
                "one?"
            )
        raise ValueError("The label column is empty in every row: there is nothing to score "
                         "the model against.")
    # The texts with whatever metadata the file has, as the model read its training rows.
    texts = mlmodel_texts(ml_model=ml_model, texts=[parsed.texts[i] for i in found.scored],
                          metadata=[parsed.metadata[i] for i in found.scored]
                          if parsed.metadata else None)
    metrics = _metrics_in_chunks(clf, ml_models.TextData(texts=texts, labels=found.truth),
                                 report, chunk_rows=chunk_rows)
    return metrics | rows_counted(scored=len(found.scored),
                                  total=len(parsed.texts) + len(parsed.problems),
                                  unscored=found.unscored) | {
        "unknown_labels": dict(sorted(found.unknown.items(), key=lambda kv: (-kv[1], kv[0]))),
        "rows_unknown_labels_only": found.unknown_only,
        "rows_without_labels": found.without_labels,
        "rows_without_labels_scored": found.no_label_scored,
        "rows_dropped": parsed.dropped,
    }


def rows_counted(*, scored: int, total: int, unscored: list[tuple[int, str]]) -> dict[str, Any]:
    """What a result says about the rows it counted: every row of the file is either scored or
    named (the first NAMED_ROWS) and counted by why."""
    return {
        "rows_scored": scored, "rows_total": total,
        "rows_not_scored": [{"row": row, "reason": why} for row, why in unscored[:NAMED_ROWS]],
        "rows_not_scored_by_reason": dict(Counter(
            why.split(":")[0] for _, why in unscored).most_common()),
        "scored_on": "" if scored == total else f"on {scored} of {total} rows",
    }


def _metrics_in_chunks(clf: Any, data: ml_models.TextData, report: Progress, *,
                       chunk_rows: int) -> dict[str, Any]:
    """BaseClassifier.evaluate, its probabilities computed `chunk_rows` at a time.

    Mirrors evaluate step for step (raw probabilities, then the model's calibration, then the
    metrics with both); tests/test_evaluation_in_chunks_scores_exactly_as_the_engines_evaluate.py
    holds the two equal.
    """
    scorable = getattr(clf, "scorable", None)
    scored = scorable(data) if scorable else data.subset(
        [i for i, row in enumerate(data.labels) if row])
    total = len(scored)
    if not hasattr(clf, "_metrics_from_prob") or not total:  # not a BaseClassifier: at once
        report(MESSAGE_SCORING, 0, total)
        return clf.evaluate(scored)
    raw_of = getattr(clf, "predict_proba_raw", None)  # before calibration, where there is one
    parts = []
    report(MESSAGE_SCORING, 0, total)
    for start in range(0, total, chunk_rows):
        texts = scored.texts[start:start + chunk_rows]
        parts.append(raw_of(texts) if raw_of else clf.predict_proba(texts))
        report(MESSAGE_SCORING, min(start + chunk_rows, total), total)
    prob = np.concatenate(parts)
    if raw_of is None:
        return clf._metrics_from_prob(scored, prob)
    return clf._metrics_from_prob(scored, clf.calibration.apply(prob), raw=prob)
