"""The TF-IDF yardstick every non-baseline training is measured against on validation.

Fitting tfidf_logreg takes about a second on a few thousand abstracts, so each transformer or
embedding job fits one on its own train rows and scores it on its own validation rows; the
model page can then say plainly when the expensive model lost (classification/quality.py).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from classification import ml_models

logger = logging.getLogger(__name__)
BASELINE = "tfidf_logreg"


def validation_baseline(
    *, model_type: str, train: ml_models.TextData, val: ml_models.TextData,
    config: ml_models.TrainConfig,
) -> dict[str, Any] | None:
    """{"model_type", "macro_f1", "micro_f1", "fit_seconds"} on validation, or None."""
    # A search weighs TF-IDF among its own candidates.
    if ml_models.get_spec(model_type).kind in ("baseline", "search") or not any(val.labels):
        return None
    baseline_config = ml_models.TrainConfig(
        label_names=list(config.label_names), multi_label=config.multi_label, seed=config.seed
    )
    start = time.perf_counter()
    try:
        clf = ml_models.create_classifier(BASELINE)
        scores = clf.fit(train, val, baseline_config, lambda event: None, lambda: False)
    except Exception:  # a yardstick must never fail the job it measures
        logger.exception("the TF-IDF baseline could not be fitted")
        return None
    return {
        "model_type": BASELINE,
        "macro_f1": float(scores.get("macro_f1", 0.0)),
        "micro_f1": float(scores.get("micro_f1", 0.0)),
        "fit_seconds": round(time.perf_counter() - start, 2),
    }
