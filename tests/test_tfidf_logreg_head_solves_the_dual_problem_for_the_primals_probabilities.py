"""The multi-label TF-IDF logreg head solves liblinear's dual problem: with far more features than
articles it reaches the primal's optimum much faster (scripts/tune_tfidf.py), so the model, and
every probability, is the same as before; the single-label head stays a softmax (lbfgs, primal)."""

from __future__ import annotations

import numpy as np

from classification.engine.baselines import _linear_head, _vectorizer
from classification.engine.data import read_challenge_csv
from classification.engine.metrics import encode_labels
from tests.test_tfidf_tuning_script_cross_validates_train_and_validation_rows_and_ends_with_json import (  # noqa: E501
    SLICE,
)


def test_dual_head_gives_the_primal_heads_probabilities() -> None:
    data = read_challenge_csv(SLICE)
    labels = data.label_space()
    x = _vectorizer().fit_transform(data.texts)
    y = encode_labels(data.labels, labels)
    assert x.shape[1] > x.shape[0]  # the case the dual form is for
    dual = _linear_head("tfidf", True, 42)
    assert dual.estimator.get_params()["dual"] is True
    assert dual.estimator.get_params()["solver"] == "liblinear"
    primal = _linear_head("tfidf", True, 42).set_params(estimator__dual=False)
    p_dual = dual.fit(x, y).predict_proba(x)
    p_primal = primal.fit(x, y).predict_proba(x)
    assert np.abs(p_dual - p_primal).max() < 2e-3
    assert (p_dual >= 0.5).tolist() == (p_primal >= 0.5).tolist()


def test_single_label_head_is_a_primal_softmax() -> None:
    data = read_challenge_csv(SLICE)
    labels = data.label_space()
    x = _vectorizer().fit_transform(data.texts)
    y = encode_labels([row[:1] for row in data.labels], labels).argmax(axis=1)
    head = _linear_head("tfidf", False, 42)
    assert (head.get_params()["solver"], head.get_params()["dual"]) == ("lbfgs", False)
    prob = head.fit(x, y).predict_proba(x)
    assert np.allclose(prob.sum(axis=1), 1.0)
