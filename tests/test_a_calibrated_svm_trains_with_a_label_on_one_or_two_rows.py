"""The calibrated SVM heads fold their calibration three ways, which scikit-learn refuses for a
label on fewer than three rows. Such a label gets hand-made folds instead (head_fit.py): the
model trains, saves, loads and has still learned that label, single- and multi-label; with
every label on three rows or more the head is fitted exactly as before."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn.calibration import CalibratedClassifierCV
from sklearn.svm import LinearSVC

from classification.engine.head_fit import calibration_splits, head_fit, rare_rows
from classification.ml_models import TextData, TrainConfig, create_classifier, load_classifier

WORDS = {"oncology": "tumour carcinoma chemotherapy metastasis",
         "cardiology": "heart artery infarction cardiac",
         "neurology": "brain neuron seizure nerve"}


def _data(rare_rows_count: int) -> TextData:
    rng = np.random.default_rng(0)
    texts, labels = [], []
    for label, count in (("oncology", 30), ("cardiology", 30), ("neurology", rare_rows_count)):
        for i in range(count):
            noise = " ".join(rng.choice(["cohort", "trial", "adults", "risk", "survey"], 6))
            texts.append(f"{WORDS[label]} patients study {i} {noise}")
            labels.append([label])
    return TextData(texts, labels)


@pytest.mark.parametrize("multi_label", [False, True])
@pytest.mark.parametrize("rare", [1, 2])
def test_a_rare_label_trains_saves_loads_and_is_still_learned(
        rare: int, multi_label: bool, tmp_path: Path) -> None:
    data = _data(rare)
    config = TrainConfig(label_names=sorted(WORDS), multi_label=multi_label)
    clf = create_classifier("tfidf_svm")
    clf.fit(data, data.subset(list(range(0, len(data), 4))), config, lambda _e: None,
            lambda: False)

    clf.save(str(tmp_path / "model"))
    loaded = load_classifier(str(tmp_path / "model"))
    texts = [f"{WORDS[label]} patients study 0 cohort trial" for label in sorted(WORDS)]
    raw = loaded.predict_proba_raw(texts)
    np.testing.assert_array_equal(raw, clf.predict_proba_raw(texts))
    # Learned, if weakly from so few rows: its own words give it its highest probability.
    column = raw[:, loaded.label_names.index("neurology")]
    assert column[sorted(WORDS).index("neurology")] == column.max() > column.min() + 0.05
    # The saved head keeps its plain three folds, not the fit's index arrays.
    head = loaded.head.estimator if multi_label else loaded.head
    assert head.cv == 3


def test_the_rows_of_a_rare_label_are_fitted_and_scored_in_every_fold() -> None:
    y = np.array([0] * 10 + [1] * 10 + [2, 2])
    assert rare_rows(y).tolist() == [False] * 20 + [True, True]
    splits = calibration_splits(y, seed=0)
    assert len(splits) == 3
    scored = np.concatenate([rows for _, rows in splits])
    for fit, rows in splits:
        assert {20, 21} <= set(fit)
        assert {20, 21} <= set(rows)
    # Every other row is scored once, by a fold that did not fit it.
    assert sorted(i for i in scored if i < 20) == list(range(20))
    assert all(not set(rows) - {20, 21} & set(fit) for fit, rows in splits)

    indicator = np.zeros((12, 2), dtype=int)
    indicator[:, 0] = 1
    indicator[[3, 7], 1] = 1  # column 1 is positive twice; column 0 is never negative
    assert np.flatnonzero(rare_rows(indicator)).tolist() == [3, 7]


def test_with_three_rows_of_every_label_the_head_is_fitted_as_before() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(30, 5))
    y = np.array([0, 1, 2] * 10)
    assert calibration_splits(y, seed=0) is None

    def head() -> CalibratedClassifierCV:
        return CalibratedClassifierCV(LinearSVC(random_state=0), cv=3, method="sigmoid")

    np.testing.assert_array_equal(head_fit(head(), x, y, seed=0).predict_proba(x),
                                  head().fit(x, y).predict_proba(x))
