"""Which ranker ranks a label, judged at each refresh on the decisions so far.

No single ranker ranked best on every review measured (docs/screening.md, "Ranking"): words and
sentence vectors led on most, bigram words alone on another. So each refresh judges a few
candidates on the label's decisions and ranks with the best. The judgement cannot fool itself:
each candidate is refitted k times (stratified k-fold, k = min(5, the rarer answer's count)),
each time scoring only the decided records it was not fitted on, and its figure is the mean
average precision of those held-out relevant records (1.0: each fold's relevant records ranked
above its irrelevant ones). Below MIN_EACH yes and no, the folds would hold one or two relevant
records and the figures would be noise: words rank then.

Vectors are candidates only when the caller has all of them (computed in the background,
screening/vector_fill.py): a candidate that needs them never makes a refresh wait.

Pure (numpy, scipy, scikit-learn; no Django), like screening/ranker.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from screening import ranker

FOLDS = 5
MIN_EACH = 3  # yes and no a label needs before its candidates are judged
WORDS = "svm"  # what a label ranks with until it can be judged


@dataclass(frozen=True)
class Candidate:
    name: str
    features: str  # "words", "bigrams", "vectors" or "words+vectors"
    model: str  # "svm" (linear SVM) or "logreg"
    c: float
    balanced: bool = True

    @property
    def description(self) -> str:
        kind = {"words": "words", "bigrams": "bigram words", "vectors": "sentence vectors",
                "words+vectors": "words+vectors"}[self.features]
        model = "linear SVM" if self.model == "svm" else "logistic regression"
        return f"{kind} ({model}, {'balanced' if self.balanced else 'unweighted'})"

    @property
    def needs_vectors(self) -> bool:
        return "vectors" in self.features


# The first is the tie-breaker and the ranker of a label too young to judge: the cheapest.
CANDIDATES = (
    Candidate("svm", "words", "svm", 0.1),
    Candidate("svm-bigram", "bigrams", "svm", 1.0),
    Candidate("svm-bigram-unweighted", "bigrams", "svm", 1.0, balanced=False),
    Candidate("logreg", "words", "logreg", 4.0),
    Candidate("svm-vectors", "vectors", "svm", 1.0),
    Candidate("svm-embed", "words+vectors", "svm", 0.1),
)
BY_NAME = {c.name: c for c in CANDIDATES}


class Features:
    """The feature matrices of a collection's texts, each built the first time it is asked."""

    def __init__(self, *, texts: Sequence[str], vectors: np.ndarray | None = None) -> None:
        self.texts = list(texts)
        self.vectors = vectors
        self._built: dict[str, Any] = {}

    def get(self, kind: str) -> Any:
        if kind not in self._built:
            self._built[kind] = self._build(kind)
        return self._built[kind]

    def _build(self, kind: str) -> Any:
        from scipy import sparse

        if kind == "words":
            return ranker.features_fit(texts=self.texts, ranker="svm")
        if kind == "bigrams":
            return ranker.features_fit(texts=self.texts, ranker="svm-bigram")
        if self.vectors is None:
            raise ranker.RankerError(f"The {kind} candidate needs the sentence vectors.")
        vectors = sparse.csr_matrix(np.asarray(self.vectors, dtype=np.float64))
        if kind == "vectors":
            return vectors
        return sparse.hstack([self.get("words"), vectors], format="csr")


@dataclass
class Judgement:
    candidate: str
    folds: int = 0
    figures: dict[str, float] = field(default_factory=dict)  # name -> out-of-fold AP
    yes: int = 0
    no: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {"candidate": self.candidate,
                "description": BY_NAME[self.candidate].description,
                "folds": self.folds, "figures": self.figures, "yes": self.yes, "no": self.no,
                "text": self.text}

    @property
    def text(self) -> str:
        chosen = BY_NAME[self.candidate].description
        if not self.figures:
            return (f"Ranking by {chosen}; the other rankers are judged once the label has "
                    f"{MIN_EACH} yes and {MIN_EACH} no ({self.yes} and {self.no} so far)")
        others = {n: v for n, v in self.figures.items() if n != self.candidate}
        if not others:
            return f"Ranking by {chosen}"
        second = max(others, key=lambda n: others[n])
        return (f"Ranking by {chosen}, chosen over {BY_NAME[second].description} on "
                f"{self.folds}-fold out-of-fold AP {self.figures[self.candidate]:.2f} vs "
                f"{others[second]:.2f}")


def candidate_scores(*, candidate: Candidate, features: Features, decided: Sequence[int],
                     y: Sequence[int], rows: Sequence[int] | None = None) -> np.ndarray:
    """Scores in (0, 1), higher = more likely relevant, of `rows` (all when None), from the
    candidate fitted on the `decided` rows' answers `y`."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import LinearSVC

    matrix = features.get(candidate.features)
    weights = "balanced" if candidate.balanced else None
    target = np.asarray(y, dtype=int)
    scored = matrix if rows is None else matrix[np.asarray(rows)]
    if candidate.model == "svm":
        model = LinearSVC(C=candidate.c, class_weight=weights, max_iter=2000)
        model.fit(matrix[np.asarray(decided)], target)
        return 1.0 / (1.0 + np.exp(-2.0 * model.decision_function(scored)))
    model = LogisticRegression(C=candidate.c, class_weight=weights, max_iter=300,
                               solver="liblinear")
    model.fit(matrix[np.asarray(decided)], target)
    return model.predict_proba(scored)[:, 1]


def candidates_judge(*, features: Features, decided: Sequence[int], y: Sequence[int],
                     with_vectors: bool, default: str = WORDS) -> Judgement:
    """The candidate with the best out-of-fold AP on these decisions (`default` while a label
    has fewer than MIN_EACH of either answer); ties go to the earlier, cheaper candidate."""
    from sklearn.metrics import average_precision_score
    from sklearn.model_selection import StratifiedKFold

    target = np.asarray(y, dtype=int)
    yes, no = int(target.sum()), int(len(target) - target.sum())
    if min(yes, no) < MIN_EACH:
        return Judgement(candidate=default, yes=yes, no=no)
    folds = min(FOLDS, yes, no)
    splits = list(StratifiedKFold(n_splits=folds, shuffle=True, random_state=0)
                  .split(np.zeros(len(target)), target))
    rows = np.asarray(decided)
    figures: dict[str, float] = {}
    for candidate in CANDIDATES:
        if candidate.needs_vectors and not with_vectors:
            continue
        precisions = [average_precision_score(target[test], candidate_scores(
            candidate=candidate, features=features, decided=rows[train], y=target[train],
            rows=rows[test])) for train, test in splits]
        figures[candidate.name] = round(float(np.mean(precisions)), 4)
    best = max(figures, key=lambda n: figures[n])  # max keeps the first of equals
    return Judgement(candidate=best, folds=folds, figures=figures, yes=yes, no=no)


def label_rank(*, features: Features, decided: Sequence[int], y: Sequence[int],
               with_vectors: bool, default: str = WORDS) -> tuple[np.ndarray, Judgement]:
    """Every row's score from the judged best candidate, fitted on all the decisions, and the
    judgement that chose it."""
    if not ranker.can_learn(y=y):
        raise ranker.RankerError("A label needs at least one yes and one no before it can be "
                                 "learned.")
    judged = candidates_judge(features=features, decided=decided, y=y,
                              with_vectors=with_vectors, default=default)
    scores = candidate_scores(candidate=BY_NAME[judged.candidate], features=features,
                              decided=decided, y=y)
    return scores, judged
