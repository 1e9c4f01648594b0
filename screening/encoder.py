"""The deployment's sentence encoder for the screening ranker, and the features it ranks on.

The vectors go through the deployment's embedding cache (EMBEDDING_CACHE_DIR), so a collection
is embedded once, whichever of a session refresh, a simulation or a classifier's training
embeds it first.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
from django.conf import settings

from screening import ranker

logger = logging.getLogger(__name__)


def texts_embed(texts: list[str]) -> np.ndarray:
    from classification.engine.sentence_vectors import texts_embed as embed

    cache_dir = str(settings.EMBEDDING_CACHE_DIR) if settings.EMBEDDING_CACHE_DIR else None
    return embed(texts=texts, cache_dir=cache_dir, cache_mb=settings.EMBEDDING_CACHE_MB)


def session_ranker() -> str:
    chosen = settings.SCREENING_RANKER
    if chosen not in ranker.RANKERS:
        raise ranker.RankerError(f"SCREENING_RANKER is '{chosen}': it must be one of "
                                 f"{', '.join(ranker.RANKERS)}.")
    return chosen


def session_features(*, texts: Sequence[str]) -> tuple[Any, str, str]:
    """(features, the ranker that uses them, "" or why it is not the deployment's choice).

    An encoder that cannot load (its package missing, its files unreadable) must not stop the
    ranking: the session is ranked on words only, and the page says why.
    """
    chosen = session_ranker()
    if not ranker.needs_vectors(chosen):
        return ranker.features_fit(texts=texts, ranker=chosen), chosen, ""
    try:
        return ranker.features_fit(texts=texts, ranker=chosen, embed=texts_embed), chosen, ""
    except ranker.RankerError:
        raise
    except Exception as exc:
        logger.exception("screening: the sentence encoder failed; ranking on words only")
        note = (f"Ranked on words only: the sentence encoder could not embed the records "
                f"({type(exc).__name__}: {exc}).")
        fallback = ranker.WORDS_ONLY
        return ranker.features_fit(texts=texts, ranker=fallback), fallback, note
