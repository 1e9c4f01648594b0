"""Calibration, fitted on validation, lowers the expected calibration error (ECE) on held-out
rows of a model that is over-confident by construction: its reported log-odds are three times
the true ones. Single- and multi-label, by the selection (the default), temperature, Platt,
isotonic and auto; the temperature found is the over-confidence built in; a temperature keeps
every ranking; and a real TF-IDF model stores its ECE before and after in its metrics, with
the selection's out-of-fold figures."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from classification.engine.base import BaseClassifier
from classification.engine.calibration import (
    Calibration,
    calibration_events,
    expected_calibration_error,
    reliability_curve,
)
from classification.engine.calibration_select import MIN_ROWS
from classification.ml_models import TextData, TrainConfig, create_classifier

LABELS = ["a", "b", "c"]
SHARPEN = 3.0  # the model's log-odds are this many times the truth's


class GivenProbabilities(BaseClassifier):
    """A model whose raw probabilities are given per text: calibration is what is tested."""

    def __init__(self, probabilities: dict[str, np.ndarray], *, multi_label: bool,
                 method: str) -> None:
        super().__init__("given")
        self.probabilities = probabilities
        self.label_names, self.multi_label = list(LABELS), multi_label
        self.config = TrainConfig(label_names=LABELS, multi_label=multi_label, calibration=method)

    def predict_proba_raw(self, texts: list[str]) -> np.ndarray:
        return np.stack([self.probabilities[t] for t in texts])

    @classmethod
    def load(cls, path: str, manifest: dict[str, Any]) -> BaseClassifier:
        raise NotImplementedError


def over_confident(multi_label: bool, seed: int = 0) -> tuple[GivenProbabilities, TextData,
                                                              TextData]:
    rng = np.random.default_rng(seed)
    n = 1600
    texts = [f"article {i}" for i in range(n)]
    if multi_label:
        truth_logit = rng.normal(0, 1.5, (n, 3))
        truth = rng.random((n, 3)) < 1 / (1 + np.exp(-truth_logit))
        reported = 1 / (1 + np.exp(-SHARPEN * truth_logit))
        labels = [[LABELS[j] for j in np.nonzero(row)[0]] for row in truth]
    else:
        truth_logit = rng.normal(0, 1.0, (n, 3))
        q = np.exp(truth_logit) / np.exp(truth_logit).sum(axis=1, keepdims=True)
        chosen = np.array([rng.choice(3, p=row) for row in q])
        sharp = np.exp(SHARPEN * truth_logit)
        reported = sharp / sharp.sum(axis=1, keepdims=True)
        labels = [[LABELS[k]] for k in chosen]
    data = TextData(texts, labels)
    return (GivenProbabilities(dict(zip(texts, reported, strict=True)),
                               multi_label=multi_label, method="temperature"),
            data.subset(list(range(0, n // 2))), data.subset(list(range(n // 2, n))))


@pytest.mark.parametrize("multi_label", [False, True], ids=["single-label", "multi-label"])
@pytest.mark.parametrize("method", ["select", "temperature", "platt", "isotonic", "auto"])
def test_calibration_lowers_the_ece_on_held_out_rows(multi_label: bool, method: str) -> None:
    model, val, test = over_confident(multi_label)
    model.config.calibration = method
    model._tune(val)
    metrics = model.evaluate(test)
    assert metrics["calibration"]["method"] == method
    before, after = metrics["ece_uncalibrated"], metrics["ece"]
    assert before > 0.05  # the fixture really is over-confident
    assert after < before / 2, (before, after)
    assert model.calibrated


@pytest.mark.parametrize("multi_label", [False, True], ids=["single-label", "multi-label"])
def test_the_temperature_found_is_the_over_confidence_built_in(multi_label: bool) -> None:
    model, val, _ = over_confident(multi_label)
    model._tune(val)
    assert model.calibration.temperatures
    for t in model.calibration.temperatures:
        assert t == pytest.approx(SHARPEN, rel=0.25)


def test_a_temperature_keeps_every_ranking_and_predict_proba_is_calibrated() -> None:
    model, val, test = over_confident(multi_label=True)
    model._tune(val)
    raw = model.predict_proba_raw(test.texts)
    calibrated = model.predict_proba(test.texts)
    assert np.allclose(calibrated, model.calibration.apply(raw))
    assert not np.allclose(calibrated, raw)
    for j in range(raw.shape[1]):
        assert (np.argsort(raw[:, j], kind="stable")
                == np.argsort(calibrated[:, j], kind="stable")).all()


def test_calibration_none_is_the_identity() -> None:
    model, val, test = over_confident(multi_label=False)
    model.config.calibration = "none"
    model._tune(val)
    assert not model.calibrated
    assert np.array_equal(model.predict_proba(test.texts), model.predict_proba_raw(test.texts))
    metrics = model.evaluate(test)
    assert metrics["ece"] == metrics["ece_uncalibrated"]


def test_ece_and_the_reliability_curve_on_known_numbers() -> None:
    # Ten events at 0.95 of which 5 are right: one bin, gap 0.45.
    confidence, correct = np.full(10, 0.95), np.array([1.0] * 5 + [0.0] * 5)
    assert expected_calibration_error(confidence, correct) == pytest.approx(0.45)
    assert reliability_curve(confidence, correct) == [
        {"confidence": pytest.approx(0.95), "accuracy": 0.5, "count": 10}]
    # Single-label events are the top class: right when it is the true one.
    prob = np.array([[0.7, 0.2, 0.1], [0.1, 0.6, 0.3]])
    truth = np.array([[1, 0, 0], [0, 0, 1]])
    conf, ok = calibration_events(prob, truth, multi_label=False)
    assert conf.tolist() == [0.7, 0.6]
    assert ok.tolist() == [1.0, 0.0]
    assert expected_calibration_error(np.zeros(0), np.zeros(0)) is None


def test_a_stored_calibration_reads_back_and_an_absent_one_is_the_identity() -> None:
    model, val, test = over_confident(multi_label=True)
    model.config.calibration = "auto"
    model._tune(val)
    again = Calibration.from_dict(model.calibration.as_dict())
    raw = model.predict_proba_raw(test.texts)
    assert np.array_equal(again.apply(raw), model.calibration.apply(raw))
    assert Calibration.from_dict(None).is_identity
    assert np.array_equal(Calibration.from_dict({}).apply(raw), raw)


def test_a_trained_tfidf_model_stores_its_ece_before_and_after(
        demo_split: tuple[TextData, TextData, TextData]) -> None:
    train, val, test = demo_split
    clf = create_classifier("tfidf_logreg")
    metrics = clf.fit(train, val, TrainConfig(), lambda e: None, lambda: False)
    tested = clf.evaluate(test)
    for scores in (metrics, tested):
        report = scores["calibration"]
        assert report["method"] == "select"
        # Chosen on every row of train and validation, out of fold: the demo slice's
        # validation split alone is too small to choose on (tests/test_calibration_is_chosen_by_...
        # covers the choice itself).
        assert report["selection"]["rows"] == len(train) + len(val) >= MIN_ROWS > len(val)
        assert report["selection"]["cross_fitted"]
        assert report["chosen"] == report["selection"]["chosen"]
        assert report["bins"] == 15
        assert scores["ece"] == report["ece_after"]
        assert scores["ece_uncalibrated"] == report["ece_before"]
        assert report["curve_before"]
        assert report["curve_after"]
        # Multi-label: every article-label probability is one event of the curve.
        assert sum(p["count"] for p in report["curve_after"]) == (
            scores["n"] * len(clf.label_names))
    assert clf.calibrated


def well_calibrated(seed: int = 1) -> tuple[GivenProbabilities, TextData, TextData]:
    """Reported probabilities that are the true ones: nothing to correct."""
    rng = np.random.default_rng(seed)
    n = 1600
    texts = [f"article {i}" for i in range(n)]
    q = 1 / (1 + np.exp(-rng.normal(0, 1.5, (n, 3))))
    truth = rng.random((n, 3)) < q
    data = TextData(texts, [[LABELS[j] for j in np.nonzero(row)[0]] for row in truth])
    model = GivenProbabilities(dict(zip(texts, q, strict=True)), multi_label=True,
                               method="temperature")
    return model, data.subset(list(range(n // 2))), data.subset(list(range(n // 2, n)))


def test_a_model_calibrated_already_keeps_its_probabilities() -> None:
    # A temperature that does not lower the NLL out of fold is noise: it is not applied.
    model, val, test = well_calibrated()
    model._tune(val)
    assert model.calibration.temperatures == [1.0, 1.0, 1.0]
    assert model.calibrated  # checked on validation, and found calibrated
    assert np.array_equal(model.predict_proba(test.texts), model.predict_proba_raw(test.texts))
    assert "none" in model.calibration.describe(LABELS)[0]["calibration"]
