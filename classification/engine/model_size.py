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
from functools import lru_cache
from pathlib import Path

# (layers, hidden size, feed-forward size) of the encoders the registry's figures were measured on
MINILM_L6 = (6, 384, 1536)
BERT_BASE = (12, 768, 3072)


def work_per_token(*, layers: int, hidden: int, intermediate: int) -> float:
    """Multiply-adds per token of a BERT-style encoder's layers: the four attention projections
    and the two feed-forward matrices (attention scores and embeddings are small beside them
    at the lengths MedLitBot trains at)."""
    return float(layers * (4 * hidden * hidden + 2 * hidden * intermediate))


def work_ratio(*, model_path: str | None, reference: tuple[int, int, int]) -> float:
    """The folder's work per token over `reference`'s; 1.0 when it has no readable BERT-style
    config.json (the registry's figure stands)."""
    if not model_path:
        return 1.0
    shape = _shape(str(model_path))
    if shape is None:
        return 1.0
    layers, hidden, intermediate = reference
    return work_per_token(layers=shape[0], hidden=shape[1], intermediate=shape[2]) / \
        work_per_token(layers=layers, hidden=hidden, intermediate=intermediate)


@lru_cache(maxsize=32)
def _shape(model_path: str) -> tuple[int, int, int] | None:
    try:
        config = json.loads((Path(model_path) / "config.json").read_text(encoding="utf-8"))
        layers, hidden = int(config["num_hidden_layers"]), int(config["hidden_size"])
        intermediate = int(config.get("intermediate_size") or 4 * hidden)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if min(layers, hidden, intermediate) <= 0:
        return None
    return layers, hidden, intermediate
