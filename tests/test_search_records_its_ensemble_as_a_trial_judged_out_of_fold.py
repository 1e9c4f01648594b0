"""A real search that tries an ensemble (issue 39) records it as a trial of its study, valued out
of fold on the validation rows, beside the winner scored the same way; the verdict names that
basis and keeps the ensemble only when it beat the winner there by more than its margin."""

from __future__ import annotations

from pathlib import Path

import optuna
import pytest

from classification.engine.data import stratified_split
from classification.engine.search import SearchClassifier
from classification.engine.types import TextData
from classification.ml_models import TrainConfig


def test_a_search_records_its_ensemble_trial_out_of_fold_and_its_verdict_says_so(
        demo_textdata: TextData, tmp_path: Path) -> None:
    # 80 validation rows of the 200-row slice: enough to judge an ensemble on five folds. Each
    # candidate reaches its cap of trials in about half a minute here; two minutes leave the
    # ensemble time on a loaded machine too.
    train, val, _ = stratified_split(demo_textdata, fractions=(0.5, 0.4, 0.1), seed=42)
    labels = sorted(set(train.label_space()) | set(val.label_space()))
    config = TrainConfig.from_dict({"time_budget_minutes": 2, "search_ensemble": True,
                                    "search_candidates": ["tfidf_logreg", "tfidf_svm"]})
    config.label_names, config.multi_label = labels, True
    config.output_dir = str(tmp_path)

    metrics = SearchClassifier().fit(train, val, config, lambda event: None, lambda: False)

    trials = optuna.load_study(study_name="search",
                               storage=f"sqlite:///{tmp_path / 'search.sqlite3'}").trials
    [ensemble] = [t for t in trials if t.params.get("model_type") == "ensemble"]
    judged = ensemble.user_attrs["out_of_fold"]
    labelled = sum(1 for row in val.labels if row)  # the rows an ensemble is tuned on
    assert (judged["rows"], judged["folds"]) == (labelled, 5)
    assert ensemble.value == pytest.approx(judged["ensemble"], abs=1e-5)
    assert judged["alone_model_type"] in ("tfidf_logreg", "tfidf_svm")
    assert f"out of fold on {labelled} validation rows (5 folds)" in ensemble.user_attrs["note"]
    search = metrics["search"]
    kept = judged["ensemble"] > judged["alone"] + judged["margin"]
    assert (search["winner"]["model_type"] == "ensemble") == kept
    assert ("and is the model" if kept else "was tried and not kept") in search["verdict"]
    assert f"out of fold on {labelled} validation rows" in search["verdict"]
