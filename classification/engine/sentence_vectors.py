"""Sentence vectors of whole collections, for a ranker that reads meaning as well as words.

The screening ranker (screening/ranker.py, ``svm-embed``) puts the bundled MiniLM's
mean-pooled, L2-normalised vectors beside TF-IDF. They are the very vectors the
``minilm_embed_logreg`` classifier fits on, under the same key, so a collection embedded by one
is a cache hit for the other (classification/engine/embedding_cache.py).

A session's ranking is refreshed every few decisions; embedding 2,888 abstracts costs about a
minute and a half on two CPU cores, so the vectors are computed once and then read back: from
this process's memory, else from the deployment's disk cache, else from the encoder. The
encoder itself is loaded once per process.

Pure (no Django): the caller passes the cache folder and its bound.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

MODEL_TYPE = "minilm_embed_logreg"  # whose encoder and cache key the vectors share
MAX_LENGTH = 256
MEMORY_VECTORS = 50_000  # about 77 MB of float32 384-vectors, per process
# Texts encoded, and written to the disk cache, per block: a first refresh of a large collection
# (minutes on a CPU) keeps what it finished if its worker dies, and a refresh that takes over a
# stale lock reads those blocks instead of encoding them again.
BLOCK = 1000

_lock = threading.Lock()
_encoder: dict[str, Any] = {}
_memory: OrderedDict[str, np.ndarray] = OrderedDict()


def _disk_cache(cache_dir: str | None, cache_mb: int) -> Any:
    from .baselines import embedding_disk_cache
    from .schema import TrainConfig

    config = TrainConfig(max_length=MAX_LENGTH)
    config.embedding_cache_dir, config.embedding_cache_mb = cache_dir, cache_mb
    return embedding_disk_cache(config=config, model_type=MODEL_TYPE)


def _encoder_parts() -> Any:
    if "parts" not in _encoder:
        from .batching import load_encoder
        from .loading import resolve_model_dir
        from .schema import TrainConfig

        _encoder["parts"] = load_encoder(resolve_model_dir(MODEL_TYPE, TrainConfig()), None)
    return _encoder["parts"]


def _remember(vectors: dict[str, np.ndarray]) -> None:
    for text, vector in vectors.items():
        _memory[text] = vector
        _memory.move_to_end(text)
    while len(_memory) > MEMORY_VECTORS:
        _memory.popitem(last=False)


def texts_embed(*, texts: Sequence[str], cache_dir: str | None = None,
                cache_mb: int = 0) -> np.ndarray:
    """One row per text (float32, unit length), in the order given.

    Raises whatever loading the encoder raises (the package missing, its files unreadable):
    the caller decides what to rank with instead.
    """
    with _lock:  # one encoder per process; two refreshes at once must not both load it
        found = {t: _memory[t] for t in dict.fromkeys(texts) if t in _memory}
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        disk = _disk_cache(cache_dir, cache_mb) if missing else None
        if disk is not None:
            found.update(disk.get(missing))
            missing = [t for t in missing if t not in found]
        if missing:
            from .batching import encode_mean_pooled

            model, tokenizer, plan = _encoder_parts()
        for start in range(0, len(missing), BLOCK):
            block = missing[start:start + BLOCK]
            computed = dict(zip(block, encode_mean_pooled(
                model, tokenizer, block, plan, max_length=MAX_LENGTH), strict=True))
            if disk is not None:
                disk.put(computed)
            found.update(computed)
        _remember(found)
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    return np.stack([np.asarray(found[t], dtype=np.float32) for t in texts])


def texts_cached(*, texts: Sequence[str], cache_dir: str | None = None,
                 cache_mb: int = 0) -> np.ndarray | None:
    """The vectors of `texts` as texts_embed gives them, read from memory and the disk cache
    only: None when any is missing, so a caller that must not wait never loads the encoder."""
    with _lock:
        found = {t: _memory[t] for t in dict.fromkeys(texts) if t in _memory}
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        disk = _disk_cache(cache_dir, cache_mb) if missing else None
        if disk is not None:
            found.update(disk.get(missing))
        if len(found) < len(dict.fromkeys(texts)):
            return None
        _remember(found)
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    return np.stack([np.asarray(found[t], dtype=np.float32) for t in texts])
