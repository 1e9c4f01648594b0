"""Per label, the recall threshold is the highest one whose recall on the validation split's
calibrated probabilities reaches the model's recall target: at it the target is met, just above
it the target is missed. Predicting with threshold=recall gives every label reaching its
threshold (a superset of the F1 labels when those thresholds are lower), for multi- and
single-label models; an unknown threshold name is refused."""

from __future__ import annotations

import numpy as np
import pytest

from classification.engine.decisions import recall_threshold
from classification.engine.metrics import encode_labels
from classification.ml_models import TextData, TrainConfig, create_classifier


@pytest.mark.parametrize("target", [0.8, 0.95])
@pytest.mark.parametrize("kind", ["tfidf_logreg", "tfidf_svm"])
def test_each_labels_recall_threshold_reaches_the_target_on_validation(
        kind: str, target: float, demo_split: tuple[TextData, TextData, TextData]) -> None:
    train, val, _ = demo_split
    clf = create_classifier(kind)
    # Tuned on validation alone, so these rows are the ones it was tuned on; by default a
    # TF-IDF fit tunes on out-of-fold rows (the cross-fitting test checks those).
    clf.rules_folds = 0
    clf.fit(train, val, TrainConfig(recall_target=target), lambda e: None, lambda: False)
    assert clf.recall_target == target
    prob = clf.predict_proba(val.texts)
    truth = encode_labels(val.labels, clf.label_names).astype(bool)
    for j, fitted in enumerate(clf.recall_thresholds):
        positives = truth[:, j]
        if not positives.any():
            assert fitted["threshold"] is None
            continue
        t = fitted["threshold"]
        recall = (prob[positives, j] >= t).mean()
        assert recall >= target
        assert recall == pytest.approx(fitted["recall"])
        # The highest such threshold: any higher one misses the target.
        higher = np.nextafter(t, 1.0)
        assert (prob[positives, j] >= higher).mean() < target


def test_threshold_recall_gives_every_label_reaching_its_recall_threshold(
        demo_split: tuple[TextData, TextData, TextData]) -> None:
    train, val, test = demo_split
    clf = create_classifier("tfidf_logreg")
    clf.fit(train, val, TrainConfig(), lambda e: None, lambda: False)
    f1 = clf.predict(test.texts)
    recall = clf.predict(test.texts, threshold="recall")
    thresholds = [r["threshold"] for r in clf.recall_thresholds]
    for a, b in zip(f1, recall, strict=True):
        assert a["probabilities"] == b["probabilities"]
        expected = {name for j, name in enumerate(clf.label_names)
                    if b["probabilities"][name] >= thresholds[j]}
        assert set(b["labels"]) == expected or (not expected and len(b["labels"]) == 1)
    if all(r <= f for r, f in zip(thresholds, clf.thresholds, strict=True)):
        assert all(set(a["labels"]) <= set(b["labels"]) for a, b in zip(f1, recall, strict=True))
    assert sum(len(p["labels"]) for p in recall) >= sum(len(p["labels"]) for p in f1)


def test_a_single_label_model_offers_recall_thresholds_too(
        demo_split: tuple[TextData, TextData, TextData]) -> None:
    train, val, test = demo_split
    # The demo's first label of each row as a single-label task.
    single = [TextData(d.texts, [[row[0]] for row in d.labels]) for d in (train, val, test)]
    clf = create_classifier("tfidf_logreg")
    clf.fit(single[0], single[1], TrainConfig(recall_target=0.9), lambda e: None, lambda: False)
    assert not clf.multi_label
    assert len(clf.recall_thresholds) == len(clf.label_names)
    recall = clf.predict(single[2].texts, threshold="recall")
    assert all(p["labels"] for p in recall)
    assert sum(len(p["labels"]) for p in recall) >= len(recall)


def test_an_unknown_threshold_is_refused(demo_split: tuple[TextData, TextData, TextData]) -> None:
    train, val, test = demo_split
    clf = create_classifier("tfidf_logreg")
    clf.fit(train, val, TrainConfig(), lambda e: None, lambda: False)
    with pytest.raises(ValueError, match="threshold is f1 or recall, not 'precision'"):
        clf.predict(test.texts[:1], threshold="precision")


def test_the_rule_on_known_numbers() -> None:
    p = np.array([0.9, 0.8, 0.7, 0.6, 0.3, 0.2])
    y = np.array([1, 0, 1, 1, 1, 0])
    # Four positives; 0.75 of them needs three: the third-highest positive, 0.6.
    assert recall_threshold(p, y, 0.75) == {"threshold": 0.6, "recall": 0.75,
                                            "precision": 0.75, "positives": 4}
    assert recall_threshold(p, y, 0.95)["threshold"] == 0.3
    assert recall_threshold(p, np.zeros(6), 0.95)["threshold"] is None
