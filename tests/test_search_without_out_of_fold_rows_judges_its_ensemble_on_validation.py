"""A search that has no out-of-fold rows for its members (here: a label too rare for five folds,
so every trial is scored on the validation split) still tries its ensemble, tuned and judged
out of fold on the validation rows as before, and says so; no trial leaves out-of-fold
probabilities behind."""

from __future__ import annotations

from pathlib import Path

from classification.engine.data import stratified_split
from classification.engine.ensemble_score import VALIDATION_ROWS
from classification.engine.types import TextData
from tests.search_support import ensemble_search


def test_a_search_without_folds_judges_its_ensemble_on_the_validation_rows(
        demo_textdata: TextData, tmp_path: Path) -> None:
    train, val, _ = stratified_split(demo_textdata, fractions=(0.5, 0.4, 0.1), seed=42)
    # One training row of its own label: too few rows for two folds, so no trial has folds.
    train = TextData([*train.texts, "A lone case report of a rare condition."],
                     [*train.labels, ["Rare condition"]])

    metrics, ensemble = ensemble_search(train=train, val=val, folder=tmp_path,
                                        candidates=["tfidf_logreg", "minilm_embed_logreg"])

    search = metrics["search"]
    assert search["scoring"] == "the validation split"
    judged = ensemble.user_attrs["out_of_fold"]
    labelled = sum(1 for row in val.labels if row)
    assert (judged["rows"], judged["folds"], judged["over"]) == (labelled, 5, VALIDATION_ROWS)
    assert f"out of fold on {labelled} validation rows (5 folds)" in search["verdict"]
    assert "tuned and scored on all of validation" in ensemble.user_attrs["note"]
    assert not list((tmp_path / "trials").glob("*.oof.npy"))
