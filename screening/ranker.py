"""The fast ranker of continuous active learning: TF-IDF + logistic regression, per label.

Pure (numpy, scipy, scikit-learn; no Django), so the session's background refresh and the
simulation command rank with the very same code. TF-IDF is fitted once on all the texts of a
collection (unsupervised, so reading the unscreened texts leaks no decision); only the logistic
regression is refitted on the decided records.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression


class RankerError(ValueError):
    """The ranker cannot rank these records; the message is for the person."""


def features_fit(*, texts: Sequence[str]) -> Any:
    """The TF-IDF matrix of all texts (rows in the order given)."""
    if not any(t.strip() for t in texts):
        raise RankerError("None of the records has any text to rank on.")
    vectorizer = TfidfVectorizer(sublinear_tf=True, min_df=1, max_df=0.95,
                                 stop_words="english", max_features=50_000, dtype=np.float32)
    return vectorizer.fit_transform(texts)


def can_learn(*, y: Sequence[int]) -> bool:
    """A label can be learned once it has at least one yes and one no."""
    values = set(int(v) for v in y)
    return values == {0, 1}


def label_scores(*, features: Any, decided: Sequence[int], y: Sequence[int]) -> np.ndarray:
    """P(relevant) for every row, from a logistic regression fitted on the decided rows.

    class_weight="balanced": early on the decided set is small and skewed, and an unweighted
    model would rank every record as irrelevant.
    """
    if not can_learn(y=y):
        raise RankerError("A label needs at least one yes and one no before it can be learned.")
    model = LogisticRegression(C=4.0, class_weight="balanced", max_iter=300, solver="liblinear")
    model.fit(features[np.asarray(decided)], np.asarray(y, dtype=int))
    return model.predict_proba(features)[:, 1]


def priority(*, scores: dict[str, float], order: str) -> float:
    """One number to sort by, higher first: the most likely label, or the least certain one."""
    if not scores:
        return 0.0
    if order == "least_certain":
        return -min(abs(p - 0.5) for p in scores.values())
    return max(scores.values())
