"""Metric functions checked against small examples computed by hand."""

from __future__ import annotations

import json

import numpy as np
import pytest

from classification.engine.metrics import (
    apply_thresholds,
    multilabel_metrics,
    singlelabel_metrics,
    tune_thresholds,
)

LABELS = ["a", "b"]


def test_multilabel_metrics_match_hand_computed_values() -> None:
    y_true = np.array([[1, 0], [1, 1], [0, 1], [0, 0]])
    y_pred = np.array([[1, 0], [1, 0], [0, 1], [1, 0]])
    y_prob = np.array([[0.9, 0.1], [0.8, 0.4], [0.2, 0.7], [0.95, 0.1]])
    m = multilabel_metrics(y_true, y_prob, y_pred, LABELS, ["t0", "t1", "t2", "t3"])
    # rows 0 and 2 match exactly: 2/4; wrong cells: (1,b) and (3,a): 2/8
    assert m["subset_accuracy"] == pytest.approx(0.5)
    assert m["hamming_loss"] == pytest.approx(0.25)
    # label a: tp=2 fp=1 fn=0 -> f1=0.8; label b: tp=1 fp=0 fn=1 -> f1=2/3
    assert m["per_label"]["a"]["f1"] == pytest.approx(0.8)
    assert m["per_label"]["b"]["f1"] == pytest.approx(2 / 3)
    assert m["macro_f1"] == pytest.approx((0.8 + 2 / 3) / 2)
    # micro: tp=3 fp=1 fn=1 -> 0.75
    assert m["micro_f1"] == pytest.approx(0.75)
    assert m["confusion"]["a"] == [[1, 1], [0, 2]]
    assert m["n"] == 4
    # The most confident mistake is row 3 (predicted a with p=0.95).
    assert m["confident_mistakes"][0]["index"] == 3
    assert m["confident_mistakes"][0]["probability"] == pytest.approx(0.95)
    assert m["confident_mistakes"][0]["true_labels"] == []
    json.dumps(m)


def test_singlelabel_metrics_match_hand_computed_values() -> None:
    y_true = np.array([0, 0, 1, 2, 2])
    y_prob = np.array(
        [[0.7, 0.2, 0.1], [0.3, 0.6, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8], [0.6, 0.1, 0.3]]
    )
    m = singlelabel_metrics(y_true, y_prob, ["x", "y", "z"], ["a", "b", "c", "d", "e"])
    assert m["accuracy"] == pytest.approx(3 / 5)
    assert m["micro_f1"] == pytest.approx(3 / 5)
    # x: tp1 fp1 fn1 -> .5; y: tp1 fp1 fn0 -> 2/3; z: tp1 fp0 fn1 -> 2/3
    assert m["macro_f1"] == pytest.approx((0.5 + 2 / 3 + 2 / 3) / 3)
    assert m["confusion"]["matrix"] == [[1, 1, 0], [0, 1, 0], [1, 0, 1]]
    assert [x["index"] for x in m["confident_mistakes"]] == [1, 4]
    json.dumps(m)


def test_roc_auc_skips_a_label_with_only_one_class() -> None:
    y_true = np.array([[1, 0], [0, 0], [1, 0]])
    y_prob = np.array([[0.9, 0.2], [0.1, 0.3], [0.8, 0.1]])
    m = multilabel_metrics(y_true, y_prob, (y_prob > 0.5).astype(int), LABELS)
    assert m["roc_auc_macro"] == pytest.approx(1.0)


def test_tuned_thresholds_separate_a_label_that_05_gets_wrong() -> None:
    y_true = np.array([[1, 0], [1, 0], [0, 1], [0, 1]])
    y_prob = np.array([[0.35, 0.1], [0.4, 0.2], [0.1, 0.9], [0.2, 0.8]])
    t_a, _ = tune_thresholds(y_true, y_prob)
    assert 0.2 < t_a <= 0.35
    assert apply_thresholds(y_prob, [t_a, 0.5])[:, 0].tolist() == [1, 1, 0, 0]


def test_rows_with_no_label_above_threshold_get_their_most_likely_label() -> None:
    pred = apply_thresholds(np.array([[0.2, 0.4]]), [0.5, 0.5])
    assert pred.tolist() == [[0, 1]]
