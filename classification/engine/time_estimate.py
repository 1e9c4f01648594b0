"""How long training a kind takes: the one estimate the New model page and the search share.

Work is counted in rows at 256 tokens and divided by the kind's rate (rows/s per thread at 256
tokens, for the encoder size its figure was measured on) times threads**0.8 times the
device's speed-up, plus the kind's fixed overhead. The rate is the registry's figure until a job
of the kind has finished on this install; then it is the rate that job ran at (solved from its
duration with the same formula: `rate_from_run`). The Django side measures those rates from its
finished jobs (classification/estimates.py) and hands them to a search as plain numbers in its
job folder (`rates_write`), so the search's first trial of a kind is estimated exactly as the
page estimates the same training. static/js/model_new.js mirrors `estimate_seconds` for the
page's live figures.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from . import model_size
from .registry import ModelSpec

GPU_SPEEDUP = {"cuda": 25.0, "mps": 4.0, "cpu": 1.0}
THREAD_EXPONENT = 0.8  # two threads are not twice one: memory bandwidth is shared
# Subword tokens per word of biomedical English with a general vocabulary (MiniLM, BERT),
# plus [CLS]/[SEP]; measured on the demo data: 1.45 tokens per word.
TOKENS_PER_WORD = 1.45
SPECIAL_TOKENS = 2
# A forward pass (validation, test) costs about a third of a training step (forward+backward).
EVAL_COST = 1 / 3
FALLBACK_P95_WORDS = 300.0
RATES_FILE = "speed_rates.json"


def effective_length(*, max_length: int, p95_words: float | None) -> float:
    """Tokens a training row costs: batches pad to their longest row, and the engine cuts
    max_length to the data's 95th percentile (TransformerClassifier._choose_max_length)."""
    words = p95_words if p95_words and p95_words > 0 else FALLBACK_P95_WORDS
    tokens = words * TOKENS_PER_WORD + SPECIAL_TOKENS
    return float(max(32, min(max_length, tokens)))


def p95_words_of(texts: Iterable[str]) -> float | None:
    """The 95th-percentile length in words of `texts` (None for none), as a dataset's report
    gives it."""
    counts = sorted(len(str(t).split()) for t in texts)
    if not counts:
        return None
    # numpy's default (linear) percentile, without importing numpy for it.
    position = 0.95 * (len(counts) - 1)
    low, high = math.floor(position), math.ceil(position)
    return float(counts[low] + (counts[high] - counts[low]) * (position - low))


def overhead_seconds(*, spec: ModelSpec, work_ratio: float = 1.0) -> float:
    """The kind's fixed cost, less for an encoder smaller than its figure's reference."""
    return spec.speed.overhead_seconds * model_size.overhead_share(work_ratio)


def throughput(*, rate: float, threads: int, device: str) -> float:
    """Rows/s at 256 tokens on `threads` threads of `device`, at `rate` rows/s per thread."""
    return max(1, int(threads)) ** THREAD_EXPONENT * GPU_SPEEDUP.get(device, 1.0) * max(
        rate, 1e-6)


def work_rows(*, spec: ModelSpec, train: int, validation: int, test: int, epochs: int,
              max_length: int, p95_words: float | None, fits: int = 1,
              work_ratio: float = 1.0) -> float:
    """Rows at 256 tokens (at the figure's encoder size) a training does. A one-pass kind
    featurises or encodes every row once per fit; a fine-tuned one trains on `train` each
    epoch and scores validation after each epoch and test once, at a third of the cost."""
    if spec.speed.single_pass:
        return float(max(1, fits) * (train + validation) + test) * work_ratio
    length = effective_length(max_length=max_length, p95_words=p95_words) / 256
    epochs = max(1, int(epochs))
    per_fit = train * epochs + EVAL_COST * validation * epochs
    return length * (max(1, fits) * per_fit + EVAL_COST * test) * work_ratio


def estimate_seconds(*, spec: ModelSpec, train: int, validation: int, test: int, epochs: int,
                     max_length: int, p95_words: float | None, rate: float, threads: int,
                     device: str, fits: int = 1, work_ratio: float = 1.0) -> float:
    """Seconds from a training's start to its model saved, at `rate` (see the module)."""
    work = work_rows(spec=spec, train=train, validation=validation, test=test, epochs=epochs,
                     max_length=max_length, p95_words=p95_words, fits=fits,
                     work_ratio=work_ratio)
    return overhead_seconds(spec=spec, work_ratio=work_ratio) + work / throughput(
        rate=rate, threads=threads, device=device)


def rate_from_run(*, spec: ModelSpec, seconds: float, train: int, validation: int, test: int,
                  epochs: int, max_length: int, p95_words: float | None, threads: int,
                  device: str, work_ratio: float = 1.0) -> float | None:
    """The rate (rows/s per thread at 256 tokens, at the reference size) a finished training
    of `seconds` ran at: estimate_seconds solved for it. None for a run whose duration is
    mostly the fixed overhead: it says little of speed."""
    overhead = overhead_seconds(spec=spec, work_ratio=work_ratio)
    working = seconds - overhead
    if working <= 0 or working < overhead / 2:
        return None
    work = work_rows(spec=spec, train=train, validation=validation, test=test, epochs=epochs,
                     max_length=max_length, p95_words=p95_words, work_ratio=work_ratio)
    return work / working / throughput(rate=1.0, threads=threads, device=device)


def rates_write(*, folder: str | Path, rates: Mapping[str, float]) -> None:
    """Leave the install's measured rates in a job's folder, for the search it runs."""
    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    (target / RATES_FILE).write_text(json.dumps({k: float(v) for k, v in rates.items()}),
                                     encoding="utf-8")


def rates_read(*, folder: str | Path | None) -> dict[str, float]:
    """The rates rates_write left in `folder`; none (the registry's figures stand) when there
    is no such file or it cannot be read."""
    if not folder:
        return {}
    try:
        data: Any = json.loads((Path(folder) / RATES_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): float(v) for k, v in data.items()
            if isinstance(v, (int, float)) and math.isfinite(v) and v > 0}
