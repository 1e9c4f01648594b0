"""How unsure the model was about one article, from the probabilities it wrote in the batch CSV.

Uncertainty sampling: a reviewer's few hundred corrections teach a retrained model the most when
they go to the articles the model was least sure of, so the review queue is sorted by this score
(1 = a coin toss, 0 = certain). No Django here: scoring is plain arithmetic over stored numbers.

- Single-label (softmax over the labels): the margin between the two likeliest labels. A margin
  of 0 means the model could not choose; the score is ``1 - margin``.
- Multi-label (one yes/no decision per label, each at its own tuned threshold): each label's
  distance from its threshold, scaled by the room on that side (a probability of 0.9 against a
  threshold of 0.8 is as sure as 0.45 against 0.5 is unsure). The article's score is that of
  its least certain label: one wavering label is enough to make the labels as a whole doubtful.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

DEFAULT_THRESHOLD = 0.5


def label_certainty(probability: float, threshold: float) -> float:
    """0 at the threshold, 1 at 0 or 1: how far one yes/no decision is from flipping."""
    threshold = min(max(threshold, 1e-6), 1 - 1e-6)
    if probability >= threshold:
        return min(1.0, (probability - threshold) / (1 - threshold))
    return min(1.0, (threshold - probability) / threshold)


def label_uncertainties(
    *, probabilities: Mapping[str, float], labels: Sequence[str], multi_label: bool,
    thresholds: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """Each label's own uncertainty, 0..1, for showing which decisions waver."""
    probs = {name: float(probabilities.get(name) or 0.0) for name in labels}
    if multi_label:
        limits = thresholds or {}
        return {name: round(1 - label_certainty(p, limits.get(name, DEFAULT_THRESHOLD)), 4)
                for name, p in probs.items()}
    if len(probs) < 2:
        return dict.fromkeys(probs, 0.0)
    # A single-label choice wavers between the labels close to the winner.
    top = max(probs.values())
    return {name: round(1 - (top - p), 4) if p < top else round(1 - (top - _second(probs)), 4)
            for name, p in probs.items()}


def uncertainty_score(
    *, probabilities: Mapping[str, float], labels: Sequence[str], multi_label: bool,
    thresholds: Mapping[str, float] | None = None,
) -> float:
    """How unsure the model was about the article as a whole: 0 (sure) .. 1 (coin toss)."""
    if not labels:
        return 0.0
    probs = {name: float(probabilities.get(name) or 0.0) for name in labels}
    if multi_label:
        limits = thresholds or {}
        least = min(label_certainty(p, limits.get(name, DEFAULT_THRESHOLD))
                    for name, p in probs.items())
        return round(1 - least, 6)
    if len(probs) < 2:
        return 0.0
    return round(1 - (max(probs.values()) - _second(probs)), 6)


def _second(probs: Mapping[str, float]) -> float:
    ordered = sorted(probs.values(), reverse=True)
    return ordered[1] if len(ordered) > 1 else 0.0
