"""A real search that tries an ensemble (issue 39) tunes and judges it on every row of its
cross-validation folds, not on the validation split alone: each kept trial leaves its
out-of-fold probabilities beside its artifact, and the ensemble's weights and rules are
cross-fitted on those, against the winner's own, on the same rows. It records the ensemble as a
trial of its study, valued out of fold, and its verdict names that basis and keeps the ensemble
only when it beat the winner there by more than its margin."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from classification.engine.data import stratified_split
from classification.engine.ensemble_score import FOLD_ROWS
from classification.engine.types import TextData
from tests.search_support import ensemble_search


def test_a_search_judges_its_ensemble_on_its_folds_rows_and_records_the_trial(
        demo_textdata: TextData, tmp_path: Path) -> None:
    # Each candidate reaches its cap of trials in about half a minute here.
    train, val, _ = stratified_split(demo_textdata, fractions=(0.5, 0.4, 0.1), seed=42)
    labels = sorted(set(train.label_space()) | set(val.label_space()))

    metrics, ensemble = ensemble_search(train=train, val=val, folder=tmp_path,
                                        candidates=["tfidf_logreg", "tfidf_svm"])

    judged = ensemble.user_attrs["out_of_fold"]
    pooled = sum(1 for row in [*train.labels, *val.labels] if row)
    assert pooled > 2 * sum(1 for row in val.labels if row)  # more than validation holds
    assert (judged["rows"], judged["folds"], judged["over"]) == (pooled, 5, FOLD_ROWS)
    assert ensemble.value == pytest.approx(judged["ensemble"], abs=1e-5)
    assert judged["alone_model_type"] in ("tfidf_logreg", "tfidf_svm")
    assert f"out of fold on {pooled} rows of the search's folds (5 folds)" in (
        ensemble.user_attrs["note"])
    search = metrics["search"]
    kept = judged["ensemble"] > judged["alone"] + judged["margin"]
    assert (search["winner"]["model_type"] == "ensemble") == kept
    assert ("and is the model" if kept else "was tried and not kept") in search["verdict"]
    assert f"out of fold on {pooled} rows of the search's folds" in search["verdict"]

    # Every kept trial (and only those) left its out-of-fold probabilities: one row per pooled
    # row, one column per label, each row a probability distribution over the labels' scores.
    kept_trials = {int(p.name) for p in (tmp_path / "trials").iterdir()
                   if p.is_dir() and p.name.isdigit()}
    saved = {int(p.name.split(".")[0]): np.load(p)
             for p in (tmp_path / "trials").glob("*.oof.npy")}
    assert set(saved) == kept_trials
    assert len(saved) >= 2
    for prob in saved.values():
        assert prob.shape == (pooled, len(labels))
        assert np.isfinite(prob).all()
        assert (prob >= 0).all()
        assert (prob <= 1).all()
