"""A comparison gives each metric a 95% percentile bootstrap interval: it holds the score on the
rows themselves, it narrows as the rows grow, and it holds the true accuracy of a model whose
accuracy is known. The resampling is seeded: the same rows give the same interval."""

from __future__ import annotations

import time

import numpy as np

from classification.mlmodels.comparison import comparison_figures
from classification.mlmodels.comparison_rows import ComparedRows
from tests.comparison_support import LABELS, figures, rows_of


def test_every_interval_holds_its_score_and_the_true_accuracy() -> None:
    result = figures(rows_of(400, [0.8, 0.7]))
    assert result["rounds"] >= 1000
    assert result["level"] == 0.95
    keys = [m["key"] for m in result["metrics"]]
    assert keys[:3] == ["accuracy", "macro_f1", "micro_f1"]
    assert [k for k in keys if k.startswith("f1:")] == [f"f1:{name}" for name in LABELS]
    for model in result["models"]:
        for key in keys:
            cell = model["metrics"][key]
            assert cell["low"] <= cell["value"] <= cell["high"], (key, cell)
    first = result["models"][0]["metrics"]["accuracy"]
    assert first["value"] == 0.8
    assert first["low"] < 0.8 < first["high"]
    # The binomial standard error at 400 rows is 0.02: a 95% interval about 0.08 wide.
    assert 0.05 < first["high"] - first["low"] < 0.11


def test_the_interval_narrows_as_the_rows_grow() -> None:
    widths = []
    for n in (100, 1000, 10000):
        cell = figures(rows_of(n, [0.8, 0.8], seed=1))["models"][0]["metrics"]["accuracy"]
        assert cell["low"] <= 0.8 <= cell["high"]
        widths.append(cell["high"] - cell["low"])
    assert widths[0] > 2 * widths[1] > 4 * widths[2]


def test_the_same_rows_give_the_same_intervals() -> None:
    assert figures(rows_of(300, [0.7, 0.6])) == figures(rows_of(300, [0.7, 0.6]))


def test_multi_label_rows_give_subset_accuracy_and_both_f1s() -> None:
    rng = np.random.default_rng(3)
    truth = (rng.random((300, 3)) < 0.4).astype(np.int64)
    pred = truth.copy()
    flip = rng.random((300, 3)) < 0.1
    pred[flip] = 1 - pred[flip]
    result = comparison_figures(
        rows=ComparedRows(truth=truth, preds=[pred, truth], label_names=["x", "y", "z"],
                          multi_label=True, basis="300 rows"),
        models=[{"id": 1, "name": "noisy"}, {"id": 2, "name": "perfect"}])
    assert [m["key"] for m in result["metrics"]][:3] == ["micro_f1", "macro_f1",
                                                        "subset_accuracy"]
    exact = float((pred == truth).all(axis=1).mean())
    assert result["models"][0]["metrics"]["subset_accuracy"]["value"] == exact
    assert result["models"][1]["metrics"]["micro_f1"] == {"value": 1.0, "low": 1.0, "high": 1.0}
    assert result["best"]["id"] == 2
    assert result["mcnemar"] == []  # per-row correctness is a single-label idea


def test_ten_thousand_rows_take_seconds_not_minutes() -> None:
    rows = rows_of(10000, [0.8, 0.75, 0.7])
    started = time.process_time()  # the CPU it used: the test machine is shared
    figures(rows)
    assert time.process_time() - started < 10
