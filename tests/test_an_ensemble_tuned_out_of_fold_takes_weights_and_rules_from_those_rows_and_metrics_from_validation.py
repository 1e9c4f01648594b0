"""Given its members' out-of-fold probabilities (each row scored by a member fitted without
it, as a search's folds give them), an ensemble tunes its weights, calibration and decision rules
on those rows, not on the validation split; its metrics are still measured on validation, and
it saves, loads and predicts like any ensemble."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from classification.engine.base import BaseClassifier
from classification.engine.ensemble import EnsembleClassifier, TunedOn, tune_weights
from classification.engine.metrics import encode_labels
from classification.ml_models import TextData, TrainConfig, create_classifier, load_classifier

KINDS = ("tfidf_logreg", "tfidf_svm")


def fitted(kind: str, train: TextData, val: TextData, labels: list[str]) -> BaseClassifier:
    clf = create_classifier(kind)
    clf.fit(train, val, TrainConfig(label_names=labels, multi_label=True), lambda e: None,
            lambda: False)
    return clf


def out_of_fold(kind: str, rows: TextData, val: TextData, labels: list[str]) -> np.ndarray:
    """Each row of `rows` scored by the kind fitted on the other half of them."""
    halves = [list(range(0, len(rows), 2)), list(range(1, len(rows), 2))]
    prob = np.zeros((len(rows), len(labels)))
    for fit_half, scored_half in (halves, halves[::-1]):
        model = fitted(kind, rows.subset(fit_half), val, labels)
        prob[scored_half] = model.predict_proba(rows.subset(scored_half).texts)
    return prob


def test_weights_and_rules_come_from_the_out_of_fold_rows_and_metrics_from_validation(
        demo_split: tuple[TextData, TextData, TextData], tmp_path: Path) -> None:
    train, val, test = demo_split
    labels = sorted({label for data in (train, val) for row in data.labels for label in row})
    members = [fitted(kind, train, val, labels) for kind in KINDS]
    truth = encode_labels(train.labels, labels)
    oof = TunedOn(texts=list(train.texts), truth=truth,
                  probs=[out_of_fold(kind, train, val, labels) for kind in KINDS])
    config = TrainConfig(label_names=labels, multi_label=True)

    ensemble = EnsembleClassifier.from_members(members, val=val, config=config, out_of_fold=oof)

    assert ensemble.tuned_on is oof
    assert ensemble.weights == [float(w) for w in tune_weights(oof.probs, truth, True)]
    assert ensemble.metrics["decision_rules_rows"] == len(train) > 2 * len(val)
    # Its calibration was chosen on those rows, and says so (the model page words it).
    assert ensemble.calibration.selection["rows"] == len(train)
    assert ensemble.calibration.selection["cross_fitted"] is True
    # The recall thresholds were set where the out-of-fold rows reach the recall target.
    combined = ensemble.calibration.apply(np.tensordot(ensemble.weights, np.stack(oof.probs), 1))
    for j, rule in enumerate(ensemble.recall_thresholds):
        positives = truth[:, j] == 1
        if rule["threshold"] is not None:
            recall = (combined[positives, j] >= rule["threshold"]).mean()
            assert recall >= ensemble.recall_target - 1e-9
    # Measured on validation, as every model's metrics are.
    assert ensemble.metrics["macro_f1"] == pytest.approx(ensemble.evaluate(val)["macro_f1"])
    on_validation = EnsembleClassifier.from_members(members, val=val, config=config)
    assert on_validation.metrics.get("decision_rules_rows") is None
    assert on_validation.tuned_on is not None
    assert len(on_validation.tuned_on.truth) < len(train)

    ensemble.save(str(tmp_path / "ensemble"))
    loaded = load_classifier(str(tmp_path / "ensemble"))
    assert loaded.weights == ensemble.weights
    assert loaded.thresholds == ensemble.thresholds
    assert loaded.predict(test.texts) == ensemble.predict(test.texts)
