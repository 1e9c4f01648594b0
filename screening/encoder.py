"""The deployment's sentence encoder for the screening ranker.

The vectors go through the deployment's embedding cache (EMBEDDING_CACHE_DIR), so a collection
is embedded once, whichever of a session's background fill (screening/vector_fill.py), a
simulation or a classifier's training embeds it first; a refresh only reads them back.
"""

from __future__ import annotations

import numpy as np
from django.conf import settings

from screening import ranker


def texts_embed(texts: list[str]) -> np.ndarray:
    from classification.engine.sentence_vectors import texts_embed as embed

    cache_dir = str(settings.EMBEDDING_CACHE_DIR) if settings.EMBEDDING_CACHE_DIR else None
    return embed(texts=texts, cache_dir=cache_dir, cache_mb=settings.EMBEDDING_CACHE_MB)


def texts_cached(texts: list[str]) -> np.ndarray | None:
    """The texts' vectors if the embedding cache holds every one, else None (never encodes)."""
    from classification.engine.sentence_vectors import texts_cached as cached

    cache_dir = str(settings.EMBEDDING_CACHE_DIR) if settings.EMBEDDING_CACHE_DIR else None
    return cached(texts=texts, cache_dir=cache_dir, cache_mb=settings.EMBEDDING_CACHE_MB)


def vectors_wanted() -> bool:
    """Whether the deployment's ranker reads sentence vectors (SCREENING_RANKER svm-embed)."""
    return settings.SCREENING_RANKER in ranker.RANKERS and ranker.needs_vectors(
        settings.SCREENING_RANKER)


def words_default() -> str:
    """The ranker of a label too young to judge: the deployment's, or words for svm-embed,
    whose vectors a refresh never waits for."""
    chosen = session_ranker()
    return ranker.WORDS_ONLY if ranker.needs_vectors(chosen) else chosen


def session_ranker() -> str:
    chosen = settings.SCREENING_RANKER
    if chosen not in ranker.RANKERS:
        raise ranker.RankerError(f"SCREENING_RANKER is '{chosen}': it must be one of "
                                 f"{', '.join(ranker.RANKERS)}.")
    return chosen
