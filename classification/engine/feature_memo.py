"""TF-IDF features that a search's trials share instead of fitting again.

Within one search, every trial of a TF-IDF kind fits its vectorizer once per cross-validation
fold, on that fold's texts. The folds are the same for every trial (the search's seed fixes
them), and most tuned settings (C, class weights) leave the features alone, so the same
vectorizer was fitted on the same texts again and again. Fitting it was most of a trial's time:
on the 200-row demo slice, 17 of a 12-trial search's 28 s of fits, with transforming the scored
fold another 7.

A vectorizer fitted on the same texts with the same settings is the same vectorizer (the fit is
deterministic), so the memo hands back the one fitted first, and its transforms of texts it has
already transformed. It is bounded in bytes, least recently used first out: on 1,600 abstracts
of the 5-class corpus an entry held a 19 MB matrix and a vocabulary of 70,000-100,000 terms, and
a search that tries three n-gram settings over five folds needs fifteen of them to hit at all
(trials visit the folds in order, so a bound below that evicts each fold just before it recurs).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# Fifteen entries (three n-gram settings, five folds) and the kept models' own fits, on about
# 2,000 abstracts; a larger corpus keeps fewer entries, so the memo stays within this bound.
MAX_BYTES = 768 * 2**20
VOCABULARY_TERM_BYTES = 120  # a term in a Python dict: the str, its int and the slot


def texts_fingerprint(texts: list[str]) -> str:
    """A digest of the texts in order: equal texts, equal features."""
    digest = hashlib.blake2b(digest_size=16)
    for text in texts:
        data = text.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "little"))  # no separator a text could contain
        digest.update(data)
    return f"{len(texts)}:{digest.hexdigest()}"


def nbytes(matrix: Any) -> int:
    """Bytes a dense or CSR matrix holds."""
    if hasattr(matrix, "indptr"):
        return int(matrix.data.nbytes + matrix.indices.nbytes + matrix.indptr.nbytes)
    return int(getattr(matrix, "nbytes", 0))


def vocabulary_bytes(vectorizer: Any) -> int:
    """About what a fitted vectorizer's vocabularies (its own, or a union's members') hold."""
    members = [m for _, m in getattr(vectorizer, "transformer_list", [])] or [vectorizer]
    terms = sum(len(getattr(m, "vocabulary_", None) or ()) for m in members)
    return terms * VOCABULARY_TERM_BYTES


@dataclass
class _Entry:
    vectorizer: Any
    matrix: Any
    transforms: dict[str, Any] = field(default_factory=dict)
    size: int = 0


@dataclass
class FeatureMemo:
    """Fitted vectorizers by (settings, texts), and their transforms by texts."""

    max_bytes: int = MAX_BYTES
    hits: int = 0
    misses: int = 0
    held: int = 0  # bytes
    _entries: OrderedDict[tuple[Any, ...], _Entry] = field(default_factory=OrderedDict)

    def fitted(self, *, settings: tuple[Any, ...], texts: list[str],
               fit: Callable[[], tuple[Any, Any]]) -> tuple[Any, Any, tuple[Any, ...]]:
        """(vectorizer, its matrix of `texts`, the key its transforms are memoised under),
        from `fit()` the first time these settings meet these texts. The vectorizer is shared:
        callers read it, never change it."""
        key = (settings, texts_fingerprint(texts))
        entry = self._entries.get(key)
        if entry is None:
            self.misses += 1
            vectorizer, matrix = fit()
            entry = _Entry(vectorizer, matrix,
                           size=nbytes(matrix) + vocabulary_bytes(vectorizer))
            self._entries[key] = entry
            self.held += entry.size
            self._evict()
        else:
            self.hits += 1
            self._entries.move_to_end(key)
        return entry.vectorizer, entry.matrix, key

    def transformed(self, *, key: tuple[Any, ...], texts: list[str],
                    transform: Callable[[], Any]) -> Any:
        """`transform()` of `texts` by the vectorizer fitted under `key`, computed once while
        that entry is kept."""
        entry = self._entries.get(key)
        if entry is None:  # evicted since: compute, keep nothing
            return transform()
        fingerprint = texts_fingerprint(texts)
        if fingerprint in entry.transforms:
            return entry.transforms[fingerprint]
        matrix = entry.transforms[fingerprint] = transform()
        size = nbytes(matrix)
        entry.size += size
        self.held += size
        self._evict()
        return matrix

    def clear(self) -> None:
        """Forget every entry (the search is over); its counts stay."""
        self._entries.clear()
        self.held = 0

    def _evict(self) -> None:
        """Least recently used first, until the memo fits; the newest entry always stays."""
        while self.held > self.max_bytes and len(self._entries) > 1:
            _, entry = self._entries.popitem(last=False)
            self.held -= entry.size
