"""Plain-words warnings about a trained model's scores, for the model page and the API.

A model that loses to the TF-IDF baseline, or that almost never gives one of its labels, looks
fine in a table of averages; these are the two traps the issue's user fell into silently.
"""

from __future__ import annotations

from typing import Any

# A gap smaller than this is noise on a validation split of a few hundred articles.
BASELINE_MARGIN = 0.01
# A label whose recall is below this, with enough examples to judge, is "almost never given".
RARE_RECALL = 0.10
MIN_SUPPORT = 5


def quality_warnings(*, model_type: str, metrics: dict[str, Any]) -> list[str]:
    """What a user must know before trusting these scores; [] when nothing stands out."""
    warnings: list[str] = []
    baseline = metrics.get("baseline") or {}
    validation = metrics.get("validation") or {}
    ours, theirs = validation.get("macro_f1"), baseline.get("macro_f1")
    if (model_type != baseline.get("model_type") and isinstance(ours, (int, float))
            and isinstance(theirs, (int, float)) and ours < theirs - BASELINE_MARGIN):
        warnings.append(
            f"Worse than the TF-IDF baseline: on the validation split this model's macro-F1 is "
            f"{ours:.3f}, while {baseline['model_type']} trained on the same rows in "
            f"{baseline.get('fit_seconds', 0):.0f} s scores {theirs:.3f}. Prefer the baseline, "
            "or let Find the best model tune it."
        )
    split = metrics.get("evaluated_on", "test")
    for name, row in (metrics.get("per_label") or {}).items():
        support, recall = int(row.get("support") or 0), float(row.get("recall") or 0.0)
        if support >= MIN_SUPPORT and recall < RARE_RECALL:
            warnings.append(
                f"Almost never predicts “{name}”: it found {recall:.0%} of the {support} "
                f"{split} articles that carry this label."
            )
    return warnings
