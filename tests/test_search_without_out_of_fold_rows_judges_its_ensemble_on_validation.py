"""A search that has no out-of-fold rows for its members (here: a label too rare for five folds,
so every trial is scored on the validation split) still tries its ensemble, tuned and judged
out of fold on the validation rows as before, and says so; no trial leaves out-of-fold
probabilities behind."""

from __future__ import annotations

from pathlib import Path

import optuna

from classification.engine.data import stratified_split
from classification.engine.ensemble_score import VALIDATION_ROWS
from classification.engine.search import SearchClassifier
from classification.engine.types import TextData
from classification.ml_models import TrainConfig


def test_a_search_without_folds_judges_its_ensemble_on_the_validation_rows(
        demo_textdata: TextData, tmp_path: Path) -> None:
    train, val, _ = stratified_split(demo_textdata, fractions=(0.5, 0.4, 0.1), seed=42)
    # One training row of its own label: too few rows for two folds, so no trial has folds
    # (and no calibrated SVM, whose own three folds need three rows of each label).
    train = TextData([*train.texts, "A lone case report of a rare condition."],
                     [*train.labels, ["Rare condition"]])
    labels = sorted(set(train.label_space()) | set(val.label_space()))
    config = TrainConfig.from_dict({"time_budget_minutes": 2, "search_ensemble": True,
                                    "search_candidates": ["tfidf_logreg", "minilm_embed_logreg"]})
    config.label_names, config.multi_label = labels, True
    config.output_dir = str(tmp_path)

    metrics = SearchClassifier().fit(train, val, config, lambda event: None, lambda: False)

    search = metrics["search"]
    assert search["scoring"] == "the validation split"
    trials = optuna.load_study(study_name="search",
                               storage=f"sqlite:///{tmp_path / 'search.sqlite3'}").trials
    [ensemble] = [t for t in trials if t.params.get("model_type") == "ensemble"]
    judged = ensemble.user_attrs["out_of_fold"]
    labelled = sum(1 for row in val.labels if row)
    assert (judged["rows"], judged["folds"], judged["over"]) == (labelled, 5, VALIDATION_ROWS)
    assert f"out of fold on {labelled} validation rows (5 folds)" in search["verdict"]
    assert "tuned and scored on all of validation" in ensemble.user_attrs["note"]
    assert not list((tmp_path / "trials").glob("*.oof.npy"))
