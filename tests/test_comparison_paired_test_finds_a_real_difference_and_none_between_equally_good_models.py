"""Each model is tested against the best on the same resampled rows (a paired bootstrap of the
difference, with its interval and a two-sided p-value) and, single-label, by McNemar's exact
test on per-row correctness: a model right on 90% of 500 rows is told apart from one right on
60%; two models right on as many rows, but different ones, are not."""

from __future__ import annotations

import numpy as np

from classification.mlmodels.comparison import bootstrap_p_value, comparison_figures, mcnemar_exact
from tests.comparison_support import figures, rows_of


def test_ninety_percent_against_sixty_is_a_real_difference() -> None:
    result = figures(rows_of(500, [0.6, 0.9], seed=5))
    assert result["best"]["id"] == 1
    accuracy = next(d for d in result["differences"] if d["metric"] == "accuracy")
    assert accuracy["id"] == 0
    assert abs(accuracy["difference"] - 0.3) < 1e-9
    assert 0 < accuracy["low"] <= 0.3 <= accuracy["high"]
    assert accuracy["p_value"] < 0.01
    assert accuracy["distinguishable"] is True
    (mcnemar,) = result["mcnemar"]
    assert mcnemar["first_only_right"] > mcnemar["second_only_right"]
    assert mcnemar["p_value"] < 0.01


def test_two_equally_good_models_with_different_errors_are_not_told_apart() -> None:
    result = figures(rows_of(500, [0.8, 0.8], seed=7))
    a, b = result["models"]
    assert a["metrics"]["accuracy"]["value"] == b["metrics"]["accuracy"]["value"] == 0.8
    for difference in result["differences"]:
        assert difference["low"] <= 0 <= difference["high"]
        assert difference["p_value"] > 0.05
        assert difference["distinguishable"] is False
    (mcnemar,) = result["mcnemar"]
    assert mcnemar["first_only_right"] == mcnemar["second_only_right"] > 0  # other rows wrong
    assert mcnemar["p_value"] > 0.05


def test_identical_models_have_a_difference_of_exactly_zero() -> None:
    rows = rows_of(200, [0.7], seed=2)
    rows = type(rows)(truth=rows.truth, preds=[rows.preds[0], rows.preds[0].copy()],
                      label_names=rows.label_names, multi_label=False, basis=rows.basis)
    result = comparison_figures(rows=rows, models=[{"id": 1, "name": "a"}, {"id": 2, "name": "b"}])
    assert all(d["difference"] == d["low"] == d["high"] == 0 for d in result["differences"])
    assert all(d["p_value"] == 1.0 for d in result["differences"])
    assert result["mcnemar"][0]["p_value"] == 1.0


def test_the_p_values_are_two_sided() -> None:
    assert bootstrap_p_value(np.full(999, 0.1)) == 2 / 1000
    assert bootstrap_p_value(np.full(999, -0.1)) == 2 / 1000
    assert bootstrap_p_value(np.linspace(-1, 1, 1001)) == 1.0
    right = np.array([True] * 10 + [False] * 10)
    # 10 rows only the first gets right, none only the second: 2 * 0.5**10.
    assert mcnemar_exact(first_correct=right, second_correct=np.zeros(20, dtype=bool)) == {
        "first_only_right": 10, "second_only_right": 0, "p_value": 2 * 0.5 ** 10}
