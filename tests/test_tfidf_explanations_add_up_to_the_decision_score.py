"""A TF-IDF explanation is exact: its contributions plus the intercept are the decision score.

Small models are trained here on rows the test writes, where one planted word decides a label;
the head's own decision function (or, for the calibrated SVM, its folds' own calibrators) is
the reference the explanation must match.
"""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np
import pytest

from classification.ml_models import TextData, TrainConfig, create_classifier, explain

FILLER = [
    "patients", "cohort", "outcome", "randomised", "trial", "follow", "up", "baseline", "risk",
    "mortality", "adverse", "events", "analysis", "dose", "therapy", "hospital", "imaging",
    "biopsy", "survival", "treatment", "controls", "sample", "measured", "score",
]
PLANTED = {"renal": "nephrectomy", "cardiac": "stent"}
# The planted word capitalised and behind a non-ASCII word, so offsets are checked on the
# character-by-character path, not only the ASCII one.
PROBE = "Café cohort: the Nephrectomy arm had fewer adverse events at follow up; a stent was not"


def _rows(shape: str, n: int = 72, seed: int = 0) -> TextData:
    rng = random.Random(seed)
    texts, labels = [], []
    for i in range(n):
        words = [rng.choice(FILLER) for _ in range(rng.randint(10, 20))]
        if shape == "multi":
            row = [label for label in PLANTED if rng.random() < 0.5] or ["renal"]
        elif shape == "binary":
            row = [("renal", "cardiac")[i % 2]]
        else:
            row = [("renal", "cardiac", "other")[i % 3]]
        for label in row:
            if label in PLANTED:
                words.insert(rng.randrange(len(words) + 1), PLANTED[label])
        texts.append(" ".join(words))
        labels.append(row)
    return TextData(texts, labels)


def _trained(model_type: str, shape: str) -> Any:
    train, val = _rows(shape, seed=1), _rows(shape, n=24, seed=2)
    names = sorted({label for row in train.labels for label in row})
    clf = create_classifier(model_type)
    clf.fit(train, val, TrainConfig(label_names=names, multi_label=shape == "multi"),
            lambda _event: None, lambda: False)
    return clf


def _column(estimator: Any, cls: int) -> tuple[int, float]:
    """The decision column for class cls and its sign (a binary column scores classes_[1])."""
    classes = list(estimator.classes_)
    if len(classes) == 2:
        return 0, (1.0 if cls == classes[1] else -1.0)
    return classes.index(cls), 1.0


def _margins(estimator: Any, x: Any) -> np.ndarray:
    """decision_function's one row, as an array of columns also for a binary estimator."""
    return np.asarray(estimator.decision_function(x)).reshape(1, -1)[0]


def _reference_score(clf: Any, text: str, j: int) -> float:
    """The decision score of label j as scikit-learn computes it, independently of explain."""
    x = clf.vectorizer.transform([text])
    head, cls = clf.head, j
    if clf.multi_label:
        head, cls = head.estimators_[j], 1
    folds = getattr(head, "calibrated_classifiers_", None)
    if folds is None:
        column, sign = _column(head, cls)
        return sign * float(_margins(head, x)[column])
    logits = []
    for fold in folds:
        column, sign = _column(fold.estimator, cls)
        margin = _margins(fold.estimator, x)[column]
        p = float(fold.calibrators[column].predict(np.array([margin]))[0])
        logits.append(sign * math.log(p / (1.0 - p)))
    return float(np.mean(logits))


@pytest.mark.parametrize("char_ngrams", [True, False], ids=["words+chars", "words only"])
@pytest.mark.parametrize("shape", ["multi", "binary", "three classes"])
@pytest.mark.parametrize("model_type", ["tfidf_logreg", "tfidf_svm"])
def test_contributions_and_intercept_equal_the_decision_score(
        model_type: str, shape: str, char_ngrams: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("classification.engine.baselines.CHAR_NGRAMS", char_ngrams)
    clf = _trained(model_type, shape)
    result = explain(clf, PROBE, labels=clf.label_names, top_k=1000)
    assert result["method"] == "linear"
    assert [row["label"] for row in result["explanations"]] == clf.label_names
    for j, row in enumerate(result["explanations"]):
        terms = row["positive"] + row["negative"]
        assert sum(t["weight"] for t in terms) + row["base_score"] == pytest.approx(
            row["score"], abs=1e-6)
        # scikit-learn sums float32 features (tens of thousands with char pieces): rel 1e-6
        assert row["score"] == pytest.approx(_reference_score(clf, PROBE, j), rel=1e-6,
                                             abs=1e-6)
        for t in terms:  # each n-gram's contribution is coefficient x tf-idf value
            if not char_ngrams:  # (with char pieces, the terms are the words they sum into)
                assert t["weight"] == pytest.approx(t["coefficient"] * t["value"], abs=1e-9)
        # Every n-gram was found in the text, so the word spans add up to the score as well.
        spans = row["spans"]
        assert sum(w for _, _, w in spans) + row["base_score"] == pytest.approx(
            row["score"], abs=1e-6)
        assert all(0 <= s < e <= len(PROBE) for s, e, _ in spans)


@pytest.mark.parametrize("model_type", ["tfidf_logreg", "tfidf_svm"])
def test_the_top_term_for_a_planted_word_is_that_word(model_type: str) -> None:
    clf = _trained(model_type, "multi")
    result = explain(clf, PROBE, labels=["renal", "cardiac"], top_k=5)
    for row in result["explanations"]:
        planted = PLANTED[row["label"]]
        assert row["positive"][0]["term"] == planted, row["positive"]
        start, end, _ = max(row["spans"], key=lambda span: span[2])
        assert PROBE[start:end].lower() == planted
    renal = result["explanations"][0]
    start, end, _ = max(renal["spans"], key=lambda span: span[2])
    assert PROBE[start:end] == "Nephrectomy"  # the original text's characters, case kept


def test_a_label_it_does_not_know_and_an_empty_text_are_refused() -> None:
    clf = _trained("tfidf_logreg", "binary")
    with pytest.raises(ValueError, match="Unknown label 'oncology'"):
        explain(clf, PROBE, labels=["oncology"])
    with pytest.raises(ValueError, match="empty"):
        explain(clf, "   ")
    default = explain(clf, "nephrectomy cohort")
    assert [row["label"] for row in default["explanations"]] == ["renal"]
    assert default["explanations"][0]["predicted"] is True
