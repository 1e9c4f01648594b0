"""How much work a local model folder's encoder does per token, against the encoder a kind's
speed figure was measured on.

A kind that trains whatever folder the user names (`model_path`: an adapted encoder, a custom
model) has one speed figure in the registry, measured on one architecture. A search that
estimated an adapted tiny BERT at MiniLM's speed skipped its first trial for time on a loaded
machine (the estimate, a minute, times the machine's slowdown, exceeded a three-minute budget;
the trial took four seconds); one that estimated an adapted BioBERT at MiniLM's speed would
start a trial eight times longer than it planned. The folder's config.json says its size.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

# (layers, hidden size, feed-forward size) of the encoders the registry's figures were measured on
MINILM_L6 = (6, 384, 1536)
BERT_BASE = (12, 768, 3072)


def work_per_token(*, layers: int, hidden: int, intermediate: int) -> float:
    """Multiply-adds per token of a BERT-style encoder's layers: the four attention projections
    and the two feed-forward matrices (attention scores and embeddings are small beside them
    at the lengths MedLitBot trains at)."""
    return float(layers * (4 * hidden * hidden + 2 * hidden * intermediate))


# Loading, exporting and saving a smaller encoder cost less too, but not in proportion: a
# 2-layer, 32-wide BERT's search trial on 178 rows took 4.3-4.6 s on an idle 2-core machine
# against MiniLM's 25 s of overhead, nearly all of it tokenizer, int8 export and scoring.
OVERHEAD_FLOOR = 0.2


def overhead_share(ratio: float) -> float:
    """The share of a figure's fixed overhead a model `ratio` times its size pays: less for a
    smaller one (a fifth at least), the figure's for a larger one, whose rows dominate."""
    return min(1.0, max(OVERHEAD_FLOOR, ratio))


def shape_of(config: Mapping[str, Any]) -> tuple[int, int, int] | None:
    """(layers, hidden, feed-forward) from a BERT-style config's fields; None when they are
    missing or not positive."""
    try:
        layers, hidden = int(config["num_hidden_layers"]), int(config["hidden_size"])
        intermediate = int(config.get("intermediate_size") or 4 * hidden)
    except (KeyError, TypeError, ValueError):
        return None
    return (layers, hidden, intermediate) if min(layers, hidden, intermediate) > 0 else None


def shape_ratio(shape: Sequence[int] | None, *, reference: tuple[int, int, int]) -> float:
    """`shape`'s work per token over `reference`'s; 1.0 (the figure stands) without a shape."""
    try:  # a shape read back from a model's metrics JSON
        layers, hidden, intermediate = (int(v) for v in shape or ())
    except (TypeError, ValueError):
        return 1.0
    if min(layers, hidden, intermediate) <= 0:
        return 1.0
    return work_per_token(layers=layers, hidden=hidden, intermediate=intermediate) / \
        work_per_token(layers=reference[0], hidden=reference[1], intermediate=reference[2])


def work_ratio(*, model_path: str | None, reference: tuple[int, int, int]) -> float:
    """The folder's work per token over `reference`'s; 1.0 when it has no readable BERT-style
    config.json (the registry's figure stands)."""
    if not model_path:
        return 1.0
    return shape_ratio(_shape(str(model_path)), reference=reference)


@lru_cache(maxsize=32)
def _shape(model_path: str) -> tuple[int, int, int] | None:
    try:
        config = json.loads((Path(model_path) / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return shape_of(config) if isinstance(config, dict) else None
