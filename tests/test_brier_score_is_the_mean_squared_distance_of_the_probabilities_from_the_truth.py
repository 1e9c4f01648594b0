"""The Brier score an evaluation reports, on cases worked by hand: single-label sums each
article's squared distances over its classes (0 for a sure right answer, 2 for a sure wrong
one), multi-label averages every article-label pair."""

from __future__ import annotations

import numpy as np
import pytest

from classification.engine.calibration import brier_score


def test_single_label_sums_over_the_classes_of_each_article() -> None:
    prob = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.5, 0.5, 0.0]])
    truth = np.array([[1, 0, 0], [1, 0, 0], [1, 0, 0]])
    # 0 (sure and right) + 2 (sure and wrong) + (0.25 + 0.25) = 2.5 over 3 articles
    assert brier_score(prob, truth, multi_label=False) == pytest.approx(2.5 / 3)


def test_multi_label_averages_every_article_label_pair() -> None:
    prob = np.array([[0.9, 0.2], [0.4, 0.0]])
    truth = np.array([[1, 0], [1, 1]])
    # (0.01 + 0.04 + 0.36 + 1.0) / 4
    assert brier_score(prob, truth, multi_label=True) == pytest.approx(1.41 / 4)


def test_no_rows_have_no_score() -> None:
    assert brier_score(np.zeros((0, 3)), np.zeros((0, 3)), multi_label=False) is None
