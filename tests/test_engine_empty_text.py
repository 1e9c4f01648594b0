"""Prediction refuses empty texts with a clear message."""

from __future__ import annotations

import pytest

from classification.ml_models import TrainConfig, create_classifier


def test_predicting_an_empty_or_blank_text_raises_value_error(demo_split: tuple) -> None:
    train, val, _ = demo_split
    clf = create_classifier("tfidf_logreg")
    clf.fit(train, val, TrainConfig(), lambda e: None, lambda: False)
    for bad in ([""], ["   \n\t"], ["fine text about the heart", ""]):
        with pytest.raises(ValueError, match="Text is empty"):
            clf.predict(bad)


def test_transformer_prediction_also_rejects_blank_text(trained_tiny_bert: tuple) -> None:
    clf, _ = trained_tiny_bert
    with pytest.raises(ValueError, match="Text is empty"):
        clf.predict(["  "])
