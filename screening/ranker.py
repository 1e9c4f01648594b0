"""The fast rankers of continuous active learning, per label.

Pure (numpy, scipy, scikit-learn; no Django), so the session's background refresh and the
simulation command rank with the very same code. Features are fitted once on all the texts of a
collection (unsupervised, so reading the unscreened texts leaks no decision); only the linear
model is refitted on the decided records.

Four rankers, compared in simulation (docs/screening.md, "Ranking"):

* ``svm-embed`` (the default): ``svm``'s TF-IDF with the bundled MiniLM's sentence vectors
  beside it, the same linear SVM. Words find the records that share a review's vocabulary; the
  vectors find those that say the same thing in other words, which is where a words-only
  ranking leaves its last relevant records. On the 2,888-abstract public corpus whose relevant
  class is 10% (digestive diseases, medical_tc_test), the ranked order's WSS@95 went from 0.539
  to 0.637 (5 seeds). The vectors come from the caller (``embed``), computed once per text.
* ``svm``: TF-IDF of single words, a linear SVM (C=0.1) with balanced class
  weights. It ranked as well as ``logreg`` on the corpora measured (mean WSS@95 of the ranked
  order 0.456 against 0.460 over four corpora) and refits 10 to 40 times faster. A session
  falls back to it when the encoder cannot load.
* ``svm-bigram``: TF-IDF of words and word pairs, a linear SVM (C=1) with balanced class
  weights: the family of ASReview LAB 2's default (ELAS u4), the issue's anchor. It did not
  rank better here (0.435).
* ``logreg``: TF-IDF of single words, logistic regression with balanced class weights (the
  ranker before issue 36).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

DEFAULT_RANKER = "svm-embed"
WORDS_ONLY = "svm"  # what a session ranks with when the encoder cannot load
RANKERS = ("svm-embed", "svm", "svm-bigram", "logreg")
# The query strategies the simulation compares: "-explore" reads a random record in place of
# the top one 5% of the time.
RANKERS_SIMULATED = ("svm-embed", "svm", "svm-bigram", "logreg", "svm-explore")
# texts -> one unit-length vector per text (classification.engine.sentence_vectors)
Embedder = Callable[[list[str]], np.ndarray]


def needs_vectors(ranker: str) -> bool:
    return ranker == "svm-embed"


class RankerError(ValueError):
    """The ranker cannot rank these records; the message is for the person."""


def features_fit(*, texts: Sequence[str], ranker: str = DEFAULT_RANKER,
                 embed: Embedder | None = None) -> Any:
    """The feature matrix of all texts (rows in the order given) for `ranker`: TF-IDF, and for
    ``svm-embed`` the sentence vectors `embed` gives, side by side."""
    if not any(t.strip() for t in texts):
        raise RankerError("None of the records has any text to rank on.")
    if ranker not in RANKERS:
        raise RankerError(f"Unknown ranker '{ranker}': one of {', '.join(RANKERS)}.")
    if needs_vectors(ranker):
        if embed is None:
            raise RankerError(f"The {ranker} ranker needs a sentence encoder to embed with.")
        from scipy import sparse

        words = features_fit(texts=texts, ranker=WORDS_ONLY)
        vectors = np.asarray(embed(list(texts)), dtype=np.float64)
        # Unit-length vectors beside unit-length TF-IDF rows: neither kind outweighs the other.
        return sparse.hstack([words, sparse.csr_matrix(vectors)], format="csr")
    # scikit-learn is imported where it is used: every web process and worker loads this
    # module, and the import costs seconds of CPU that only a ranked session needs.
    from sklearn.feature_extraction.text import TfidfVectorizer

    if ranker == "svm-bigram":
        # min_df=2: a word pair seen once cannot generalise to another record, and dropping
        # them keeps the matrix (and each refit) small.
        vectorizer = TfidfVectorizer(sublinear_tf=True, ngram_range=(1, 2), min_df=2,
                                     max_df=0.95, stop_words="english", max_features=200_000,
                                     dtype=np.float32)
    else:
        # float64: liblinear copies float32 input to float64 at every refit (measured 4x
        # slower per fit)
        vectorizer = TfidfVectorizer(sublinear_tf=True, min_df=1, max_df=0.95,
                                     stop_words="english", max_features=50_000,
                                     dtype=np.float64)
    try:
        return vectorizer.fit_transform(texts)
    except ValueError:  # min_df=2 on a tiny collection can leave no term at all
        if ranker == "svm-bigram":
            return features_fit(texts=texts, ranker="logreg")
        raise


def can_learn(*, y: Sequence[int]) -> bool:
    """A label can be learned once it has at least one yes and one no."""
    values = set(int(v) for v in y)
    return values == {0, 1}


def label_scores(*, features: Any, decided: Sequence[int], y: Sequence[int],
                 ranker: str = DEFAULT_RANKER) -> np.ndarray:
    """A score in (0, 1) for every row, higher = more likely relevant, fitted on the decided rows.

    class_weight="balanced": early on the decided set is small and skewed, and an unweighted
    model would rank every record as irrelevant. The SVM's margin is squashed by a logistic
    curve so the page can show it next to a probability; only its order is used to rank.
    """
    if not can_learn(y=y):
        raise RankerError("A label needs at least one yes and one no before it can be learned.")
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import LinearSVC

    rows, target = features[np.asarray(decided)], np.asarray(y, dtype=int)
    if ranker in ("svm", "svm-embed", "svm-bigram"):
        # C=0.1 on single words: a few decided records should not fit every rare word
        model = LinearSVC(C=1.0 if ranker == "svm-bigram" else 0.1, class_weight="balanced",
                          max_iter=2000)
        model.fit(rows, target)
        return 1.0 / (1.0 + np.exp(-2.0 * model.decision_function(features)))
    model = LogisticRegression(C=4.0, class_weight="balanced", max_iter=300, solver="liblinear")
    model.fit(rows, target)
    return model.predict_proba(features)[:, 1]


def priority(*, scores: dict[str, float], order: str) -> float:
    """One number to sort by, higher first: the most likely label, or the least certain one."""
    if not scores:
        return 0.0
    if order == "least_certain":
        return -min(abs(p - 0.5) for p in scores.values())
    return max(scores.values())
