"""The scikit-learn baselines learn the demo slice and report the contracted metrics."""

from __future__ import annotations

import time
from collections import Counter

import pytest

from classification.engine.metrics import compute_metrics, encode_labels
from classification.ml_models import TextData, TrainConfig, create_classifier

REQUIRED = {
    "micro_f1",
    "macro_f1",
    "n",
    "subset_accuracy",
    "hamming_loss",
    "per_label",
    "confusion",
    "confident_mistakes",
    "roc_auc_macro",
}


def _trivial_macro_f1(train: TextData, test: TextData, labels: list[str]) -> float:
    """Always predict the most common label set of the training data."""
    common = Counter(tuple(sorted(row)) for row in train.labels).most_common(1)[0][0]
    prob = encode_labels([list(common)] * len(test), labels).astype(float)
    return compute_metrics(test.labels, prob, labels, True)["macro_f1"]


@pytest.mark.parametrize("model_type", ["tfidf_logreg", "tfidf_svm"])
def test_tfidf_baselines_learn_the_demo_slice_above_a_trivial_baseline(
    model_type: str, demo_textdata: TextData
) -> None:
    # A bigger training share than the 80/10/10 split: 200 rows is little for n-gram features.
    train, val, test = (
        demo_textdata.subset(list(range(140))),
        demo_textdata.subset(list(range(140, 170))),
        demo_textdata.subset(list(range(170, 200))),
    )
    clf = create_classifier(model_type)
    start = time.perf_counter()
    val_metrics = clf.fit(train, val, TrainConfig(), lambda e: None, lambda: False)
    assert time.perf_counter() - start < 10
    assert clf.multi_label
    assert set(val_metrics) >= REQUIRED
    metrics = clf.evaluate(test)
    assert set(metrics) >= REQUIRED
    assert metrics["n"] == 30
    labels = clf.label_names
    assert metrics["macro_f1"] > _trivial_macro_f1(train, test, labels) + 0.15
    assert len(clf.thresholds) == len(labels)
