"""A kind a search scores on validation only (a fine-tuned transformer: here the adapted kind on
the tiny BERT) has no out-of-fold probabilities. It no longer sends the whole ensemble back to
the validation split's few rows: the kinds that were cross-validated are ensembled and judged
on every row of the folds, and the verdict names the kind left out and why."""

from __future__ import annotations

from pathlib import Path

from classification.engine.data import stratified_split
from classification.engine.ensemble_score import FOLD_ROWS
from classification.engine.types import TextData
from tests.search_support import ensemble_search


def test_the_cross_validated_kinds_are_ensembled_on_the_folds_without_the_transformer(
        demo_textdata: TextData, tiny_bert_dir: Path, tmp_path: Path) -> None:
    train, val, _ = stratified_split(demo_textdata, fractions=(0.5, 0.4, 0.1), seed=42)

    metrics, ensemble = ensemble_search(
        train=train, val=val, folder=tmp_path, model_path=str(tiny_bert_dir),
        candidates=["tfidf_logreg", "tfidf_svm", "adapted"])

    search = metrics["search"]
    assert any(row["model_type"] == "adapted" and row["state"] == "complete"
               for row in search["trial_rows"])
    judged = ensemble.user_attrs["out_of_fold"]
    pooled = sum(1 for row in [*train.labels, *val.labels] if row)
    assert (judged["rows"], judged["over"]) == (pooled, FOLD_ROWS)
    weights = ensemble.user_attrs["note"].split("; weights ", 1)[1]
    assert "tfidf_logreg" in weights
    assert "tfidf_svm" in weights
    assert "adapted" not in weights
    assert ("adapted (scored on validation only) was left out of the ensemble, so that the "
            "other kinds were judged on the rows of the folds.") in search["verdict"]
