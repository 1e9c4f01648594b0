"""A kind a search scores on validation only (a fine-tuned transformer: here the adapted kind on
the tiny BERT) has no out-of-fold probabilities. It no longer sends the whole ensemble back to
the validation split's few rows: the kinds that were cross-validated are ensembled and judged
on every row of the folds first, and the verdict names the kind left out and why. Only when
that ensemble is not kept is one with the transformer tried, on validation (or, when no time is
left to judge it, the verdict says so)."""

from __future__ import annotations

import re
from pathlib import Path

import optuna

from classification.engine.data import stratified_split
from classification.engine.ensemble_score import FOLD_ROWS, VALIDATION_ROWS
from classification.engine.types import TextData
from tests.search_support import ensemble_search


def _weights(trial: optuna.trial.FrozenTrial) -> str:
    return trial.user_attrs["note"].split("; weights ", 1)[1]


def test_the_cross_validated_kinds_are_ensembled_on_the_folds_before_the_transformer_joins(
        demo_textdata: TextData, tiny_bert_dir: Path, tmp_path: Path) -> None:
    train, val, _ = stratified_split(demo_textdata, fractions=(0.5, 0.4, 0.1), seed=42)

    # Three minutes: the transformer's trials and two ensembles, on a loaded machine too.
    metrics, first = ensemble_search(
        train=train, val=val, folder=tmp_path, model_path=str(tiny_bert_dir),
        candidates=["tfidf_logreg", "tfidf_svm", "adapted"], time_budget_minutes=3)

    search = metrics["search"]
    assert any(row["model_type"] == "adapted" and row["state"] == "complete"
               for row in search["trial_rows"]), (search["verdict"], search["trial_rows"])
    judged = first.user_attrs["out_of_fold"]
    pooled = sum(1 for row in [*train.labels, *val.labels] if row)
    assert (judged["rows"], judged["over"]) == (pooled, FOLD_ROWS)
    assert "tfidf_logreg" in _weights(first)
    assert "tfidf_svm" in _weights(first)
    assert "adapted" not in _weights(first)
    assert ("adapted (scored on validation only) was left out of the first ensemble, so that "
            "the other kinds were judged on the rows of the folds.") in search["verdict"]

    trials = optuna.load_study(study_name="search",
                               storage=f"sqlite:///{tmp_path / 'search.sqlite3'}").trials
    ensembles = sorted((t for t in trials if t.params.get("model_type") == "ensemble"),
                       key=lambda t: t.number)
    if judged["ensemble"] > judged["alone"] + judged["margin"]:
        assert [t.number for t in ensembles] == [first.number]
        assert search["winner"]["model_type"] == "ensemble"
        return
    if len(ensembles) == 1:  # a loaded machine can leave too little time to judge it
        assert re.search(r"An ensemble of [^.]*adapted[^.]* was not judged: ", search["verdict"])
        return
    assert len(ensembles) == 2
    second = ensembles[1].user_attrs["out_of_fold"]
    labelled = sum(1 for row in val.labels if row)
    assert (second["rows"], second["over"]) == (labelled, VALIDATION_ROWS)
    assert "adapted" in _weights(ensembles[1])
    assert "An ensemble of the best of each kind" in search["verdict"]
