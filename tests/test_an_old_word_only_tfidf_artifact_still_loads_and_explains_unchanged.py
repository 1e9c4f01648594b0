"""A word-only TF-IDF model saved before char n-grams came in loads as it was saved: a plain
TfidfVectorizer with its compact vocabulary, the same probabilities and predictions it gave
when trained, and an explanation in word n-grams. The fixture was written by that code
(tfidf_logreg on 120 rows of demo_slice.csv, validated on the next 30)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from classification.ml_models import explain, load_classifier

FIXTURES = Path(__file__).parent / "fixtures"
ARTIFACT = FIXTURES / "tfidf_logreg_word_only_artifact"
EXPECTED = json.loads((FIXTURES / "tfidf_logreg_word_only_expected.json").read_text())


@pytest.fixture
def artifact(tmp_path: Path) -> Path:
    return Path(shutil.copytree(ARTIFACT, tmp_path / "old"))


def test_it_loads_as_a_plain_vectorizer_with_the_probabilities_it_was_saved_with(
        artifact: Path) -> None:
    from sklearn.feature_extraction.text import TfidfVectorizer

    clf = load_classifier(str(artifact))
    assert type(clf.vectorizer) is TfidfVectorizer
    assert len(clf.vectorizer.vocabulary_) == 2026
    probabilities = clf.predict_proba_raw(EXPECTED["texts"])
    np.testing.assert_array_equal(probabilities, np.array(EXPECTED["probabilities"]))
    assert clf.predict(EXPECTED["texts"]) == EXPECTED["predictions"]


def test_its_explanation_still_lists_word_ngrams_with_coefficient_and_value(
        artifact: Path) -> None:
    clf = load_classifier(str(artifact))
    text = EXPECTED["texts"][2]  # cardiac hypertrophy
    row = explain(clf, text, labels=["cardiovascular"], top_k=1000)["explanations"][0]
    terms = row["positive"] + row["negative"]
    assert terms
    assert all(t["weight"] == pytest.approx(t["coefficient"] * t["value"], abs=1e-9)
                         for t in terms)
    assert sum(w for _, _, w in row["spans"]) + row["base_score"] == pytest.approx(
        row["score"], abs=1e-6)
    assert "cardiac" in [t["term"] for t in row["positive"]]
