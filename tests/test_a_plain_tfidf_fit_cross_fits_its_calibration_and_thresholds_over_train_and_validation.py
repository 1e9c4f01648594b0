"""A TF-IDF or embedding model fitted on its own (a training job, not a search's trial) takes its
calibration, F1 thresholds and recall thresholds from out-of-fold probabilities over train and
validation: on its own features, five heads with its settings, each fitted without one fold and
scoring it (issue 39: cross-fitted, not tuned on a few hundred validation rows). The model itself
is still the one fitted on train, its validation metrics are those of the rules it predicts
with, the rows the rules came from are named, and a stop between folds ends the fit."""

from __future__ import annotations

import numpy as np
import pytest

from classification.engine import search_scoring
from classification.engine.baselines import SklearnClassifier, _linear_head
from classification.engine.decisions import recall_thresholds
from classification.engine.metrics import encode_labels
from classification.ml_models import TextData, TrainConfig, TrainingStopped, create_classifier


def config_for(train: TextData, val: TextData) -> TrainConfig:
    config = TrainConfig()
    config.label_names = sorted(set(train.label_space()) | set(val.label_space()))
    config.multi_label = True
    return config


def on_validation() -> SklearnClassifier:
    clf = create_classifier("tfidf_logreg")
    clf.rules_folds = 0
    return clf


def test_a_plain_fit_tunes_its_rules_on_every_folds_held_out_rows(demo_split) -> None:
    train, val, test = demo_split
    config = config_for(train, val)
    events: list[dict] = []
    clf = create_classifier("tfidf_logreg")
    clf.fit(train, val, config, events.append, lambda: False)

    # By hand: the same folds (the seed fixes them); on the model's own TF-IDF features (fitted
    # on train's texts), each fold scored by a head with the same settings that never saw it.
    by_hand = on_validation()
    by_hand.fit(train, val, config, lambda e: None, lambda: False)
    tuned_on_val = list(by_hand.thresholds)
    pool = search_scoring.pooled(train, val)
    features = by_hand.vectorizer.transform(pool.texts)
    targets = encode_labels(pool.labels, by_hand.label_names)
    raws, rows = [], []
    for fit_rows, scored_rows in search_scoring.folds(pool, seed=config.seed):
        head = _linear_head("tfidf", True, config.seed).fit(features[fit_rows], targets[fit_rows])
        raws.append(head.predict_proba(features[scored_rows]))
        rows += scored_rows
    by_hand._tune(pool.subset(rows), np.concatenate(raws))

    assert clf.metrics["decision_rules_rows"] == len(rows) == len(pool)
    assert clf.thresholds == by_hand.thresholds != tuned_on_val
    assert clf.calibration.method == by_hand.calibration.method
    assert clf.calibration.selection["rows"] == len(rows)
    assert clf.calibration.selection["cross_fitted"] is True
    np.testing.assert_allclose(clf.predict_proba(test.texts), by_hand.predict_proba(test.texts))
    # the model is the one fitted on train: its raw probabilities are those of a plain fit
    np.testing.assert_allclose(clf.predict_proba_raw(test.texts),
                               by_hand.predict_proba_raw(test.texts))
    # the recall thresholds reach their target on the rows they were tuned on
    truth = encode_labels(pool.subset(rows).labels, clf.label_names)
    calibrated = clf.calibration.apply(np.concatenate(raws))
    assert clf.recall_thresholds == recall_thresholds(truth, calibrated, clf.recall_target)
    # the validation metrics are those of the rules it predicts with
    assert clf.metrics["micro_f1"] == clf.evaluate(val)["micro_f1"]
    folds_said = [e["message"] for e in events if "decision rules" in e.get("message", "")]
    assert folds_said == [f"decision rules: fold {n} of 5" for n in range(1, 6)]


def test_a_stop_between_folds_ends_the_fit(demo_split) -> None:
    train, val, _ = demo_split
    folds_started: list[str] = []

    def said(event: dict) -> None:
        if "decision rules" in event.get("message", ""):
            folds_started.append(event["message"])

    with pytest.raises(TrainingStopped):
        create_classifier("tfidf_svm").fit(train, val, config_for(train, val), said,
                                           lambda: len(folds_started) >= 2)
    assert len(folds_started) == 2


def test_too_few_rows_for_folds_keep_the_rules_of_validation(demo_split) -> None:
    train, val, _ = demo_split
    # one article of a label: no fold can both fit it and score it
    few_train = train.subset(list(range(6)))
    few_val = val.subset(list(range(2)))
    config = config_for(few_train, few_val)
    clf = create_classifier("tfidf_logreg")
    clf.fit(few_train, few_val, config, lambda e: None, lambda: False)
    assert "decision_rules_rows" not in clf.metrics
