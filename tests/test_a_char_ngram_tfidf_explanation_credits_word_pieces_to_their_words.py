"""With char n-grams beside the words, an explanation credits each char_wb piece to the word(s)
its span lies in, so the highlighted words still add up to the model's decision score, the
words carry the pieces' weight (not only their own n-grams'), a token with no word of its own
(a digit, a single letter) gets a span of its own, and no two spans overlap."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from classification.engine.explain import linear_score_parts
from classification.engine.tfidf_spans import feature_spans
from classification.ml_models import TextData, TrainConfig, create_classifier, explain

FILLER = ["patients", "cohort", "outcome", "randomised", "trial", "baseline", "risk", "dose",
          "mortality", "adverse", "events", "therapy", "hospital", "imaging", "survival", "a"]
PLANTED = {"renal": ["nephrectomy", "nephropathy", "nephritis"],
           "cardiac": ["stenting", "angioplasty", "cardiomyopathy"]}
PROBE = "Café cohort: a Nephrectomy-free arm (n = 5) had fewer adverse events; no stenting."


def _trained() -> object:
    rng = random.Random(0)
    texts, labels = [], []
    for i in range(90):
        label = ("renal", "cardiac")[i % 2]
        words = [rng.choice(FILLER) for _ in range(rng.randint(8, 16))]
        words.insert(rng.randrange(len(words) + 1), rng.choice(PLANTED[label]))
        texts.append(" ".join(words))
        labels.append([label])
    clf = create_classifier("tfidf_logreg")
    clf.fit(TextData(texts[:70], labels[:70]), TextData(texts[70:], labels[70:]),
            TrainConfig(label_names=["cardiac", "renal"], multi_label=True),
            lambda _event: None, lambda: False)
    return clf


@pytest.fixture(scope="module")
def clf() -> object:
    return _trained()


def test_the_highlighted_words_add_up_to_the_score_and_never_overlap(clf: object) -> None:
    result = explain(clf, PROBE, labels=["renal", "cardiac"], top_k=1000)
    for row in result["explanations"]:
        spans = sorted(row["spans"])
        assert sum(w for _, _, w in spans) + row["base_score"] == pytest.approx(
            row["score"], abs=1e-6)
        assert all(e1 <= s2 for (_, e1, _), (s2, _, _) in itertools.pairwise(spans))
        assert all(" " not in PROBE[s:e] for s, e, _ in spans)  # one token at most
        terms = row["positive"] + row["negative"]  # the words, each with its summed weight
        assert sum(t["weight"] for t in terms) == pytest.approx(
            sum(w for _, _, w in spans), abs=1e-9)
    renal, cardiac = result["explanations"]
    top = max(renal["spans"], key=lambda span: span[2])
    assert PROBE[top[0]:top[1]] == "Nephrectomy"
    assert renal["positive"][0]["term"] == "nephrectomy"
    assert cardiac["positive"][0]["term"] == "stenting"
    # "a" is no word of the word analyzer (two characters at least), yet " a " is a char piece.
    a = PROBE.index(" a ") + 1
    assert [(s, e) for s, e, w in renal["spans"] if s == a and w != 0.0] == [(a, a + 1)]


def test_a_word_carries_its_char_pieces_weight_beside_its_own(clf: object) -> None:
    vectorizer = clf.vectorizer  # type: ignore[attr-defined]
    words_part = dict(vectorizer.transformer_list)["words"]
    n_words = len(words_part.vocabulary_)
    text = "nephrectomy"
    x = vectorizer.transform([text]).toarray()[0]
    w, _b = linear_score_parts(clf.head, 1, True)  # type: ignore[attr-defined]
    word_part, char_part = float(x[:n_words] @ w[:n_words]), float(x[n_words:] @ w[n_words:])
    assert char_part != 0.0
    assert word_part != 0.0
    row = explain(clf, text, labels=["renal"])["explanations"][0]
    assert row["spans"] == [(0, len(text), pytest.approx(word_part + char_part, abs=1e-9))]
    # Every char piece in the union's columns was found in the text and placed on the word.
    spans, found = feature_spans(vectorizer, text)
    assert spans == [(0, len(text))]
    assert {f for f in found if f >= n_words} == {n_words + f for f in np.flatnonzero(
        x[n_words:])}
