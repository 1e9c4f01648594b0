"""How long a search's next trial will take, so the schedule only starts what the budget fits.

The candidate's latest measured trial, scaled to the new settings' work, is the best guess;
before any trial of the kind has finished, the estimate is engine/time_estimate.py's, the one
the New model page shows for the same training: the kind's rate measured by this install's
finished jobs (or the registry's figure), on this device's threads.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import search_space, time_estimate
from .registry import ModelSpec

GPU_SPEEDUP = time_estimate.GPU_SPEEDUP


@dataclass(frozen=True)
class TrialRows:
    """What a search's trials read: the split sizes each fit trains on and scores, the texts'
    95th-percentile length in words, and the install's measured rates per kind."""

    train: int
    validation: int
    p95_words: float | None = None
    rates: Mapping[str, float] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return self.train + self.validation


def trial_seconds(*, spec: ModelSpec, settings: dict[str, Any], trials: list[Any],
                  device_plan: Any, rows: TrialRows, fits: int = 1, slowdown: float = 1.0,
                  cache: dict[Any, Any] | None = None, texts: list[str] | None = None,
                  work_ratio: float = 1.0) -> float:
    """Seconds a trial of `spec` at `settings` takes, given the study's `trials` so far, the
    `rows` each fit reads and scores, and the `fits` a trial makes (cross-validation's folds
    and the kept model's own fit). Before the kind has a measured trial, prior_seconds times
    `slowdown` (how much slower than their estimates other kinds of its family ran here).

    An embedding kind pays its encoder only for the `texts` the search's shared `cache` does
    not hold yet (an earlier trial's, or the disk cache's): a measured trial's time less what
    it spent embedding, plus the texts left at the measured seconds per text.

    `work_ratio`: for a kind that trains the user's own folder, its encoder's work per token
    over that of the model the kind's figure was measured on (model_size.work_ratio)."""
    units = search_space.work_units(spec, settings)
    left = (embedding_uncached(cache=cache, texts=texts)
            if spec.kind == "embedding" and cache is not None and texts is not None else None)
    measured = [t for t in trials if t.params.get("model_type") == spec.key
                and t.user_attrs.get("seconds") and t.value is not None]
    if measured:
        # A trial whose TF-IDF came from the memo is no guide to one that must fit its own.
        last = ([t for t in measured if t.user_attrs.get("features_fitted", 1)] or measured)[-1]
        done = search_space.work_units(spec, search_space.unprefixed(last.params))
        if left is None:
            return float(last.user_attrs["seconds"]) * units / done
        head = float(last.user_attrs["seconds"]) - float(last.user_attrs.get("embed_seconds", 0))
        per_text = float((cache or {}).get("embed_seconds_per_text", 0.0))
        return max(0.0, head) * units / done + left * per_text
    if left is not None:  # the encoder reads only the texts not cached yet
        rows = TrialRows(train=left, validation=0, p95_words=rows.p95_words, rates=rows.rates)
    return slowdown * prior_seconds(spec=spec, settings=settings, device_plan=device_plan,
                                    rows=rows, fits=fits, work_ratio=work_ratio)


def embedding_uncached(*, cache: dict[Any, Any], texts: list[str]) -> int:
    """How many of `texts` no embedding in a search's shared cache covers yet."""
    held = [v for k, v in cache.items() if isinstance(k, tuple) and k[:1] == ("embeddings",)]
    return sum(1 for t in dict.fromkeys(texts) if not any(t in h for h in held))


def prior_seconds(*, spec: ModelSpec, settings: dict[str, Any], device_plan: Any,
                  rows: TrialRows, fits: int = 1, work_ratio: float = 1.0) -> float:
    """time_estimate's seconds for a trial nothing has measured yet: what the New model page
    estimates for the same training with no test split, times the trial's `fits`, at the
    kind's measured rate in `rows.rates` (else the registry's). A one-pass kind's settings
    scale it by their work against its defaults' (longer n-grams)."""
    units = (search_space.work_units(spec, settings) /
             search_space.work_units(spec, search_space.defaults(spec))
             if spec.speed.single_pass else 1.0)
    seconds = time_estimate.estimate_seconds(
        spec=spec, train=rows.train, validation=rows.validation, test=0,
        epochs=int(settings.get("epochs", 3)), max_length=int(settings.get("max_length", 256)),
        p95_words=rows.p95_words,
        rate=float(rows.rates.get(spec.key, spec.speed.samples_per_second_per_thread)),
        threads=max(1, int(getattr(device_plan, "threads", 1) or 1)),
        device=str(getattr(device_plan, "device", "cpu")), fits=fits, work_ratio=work_ratio)
    overhead = time_estimate.overhead_seconds(spec=spec, work_ratio=work_ratio)
    return overhead + (seconds - overhead) * units


def slowdown(*, spec: ModelSpec, trials: list[Any], device_plan: Any, rows: TrialRows,
             fits_of: Callable[[ModelSpec], int],
             work_ratio_of: Callable[[ModelSpec], float] = lambda spec: 1.0) -> float:
    """How many times slower than their estimates the finished default trials of `spec`'s
    family (its `kind`) ran (at least 1): the largest ratio, so a loaded machine's first trial
    of a kind is not started on an estimate made for an idle one. Only its own family: a
    TF-IDF trial, mostly fixed costs, says nothing of how fast a transformer trains."""
    from .registry import REGISTRY

    ratios = []
    for t in trials:
        other = REGISTRY.get(str(t.params.get("model_type")))
        seconds = t.user_attrs.get("seconds")
        if other is None or other.kind != spec.kind or t.value is None or not seconds \
                or not t.user_attrs.get("default"):
            continue
        prior = prior_seconds(spec=other, settings=search_space.unprefixed(t.params),
                              device_plan=device_plan, rows=rows, fits=fits_of(other),
                              work_ratio=work_ratio_of(other))
        ratios.append(float(seconds) / max(prior, 1e-6))
    return max([1.0, *ratios])


def larger_budgets(*, skipped: list[dict[str, Any]],
                   budget_seconds: float) -> list[dict[str, Any]]:
    """What a larger budget would have added: for each kind skipped because its first trial
    did not fit, the smallest budget (whole minutes, half minutes below ten) at which it would
    have run, with a sentence that says so.

    `skipped`: per kind, its `model_type`, `kind`, the `estimate_seconds` of its first trial
    (cache-aware: trial_seconds) and the search's `spent_seconds` and `reserve_seconds` (the
    time kept for after the search) when it was skipped. The search starts its first trials
    cheapest first, so with more time a kind skipped later runs after the ones skipped before
    it: their estimates add up, in the order they were skipped."""
    rows: list[dict[str, Any]] = []
    before = 0.0
    for entry in sorted(skipped, key=lambda e: (e["spent_seconds"], e["estimate_seconds"])):
        estimate = float(entry["estimate_seconds"])
        needed = float(entry["spent_seconds"]) + float(entry["reserve_seconds"]) + before
        needed += estimate
        minutes = _round_up_minutes(max(needed, budget_seconds + 1.0) / 60)
        verb = "fine-tune" if entry.get("kind") == "transformer" else "try"
        after = [row["model_type"] for row in rows]
        sentence = (f"With {minutes:g} min, the search would also {verb} "
                    f"{entry['model_type']} (estimated {estimate / 60:.1f} min"
                    + (f", after {', '.join(after)}" if after else "") + ").")
        rows.append({"model_type": entry["model_type"], "budget_minutes": minutes,
                     "estimate_minutes": round(estimate / 60, 1), "sentence": sentence})
        before += estimate
    return rows


def _round_up_minutes(minutes: float) -> float:
    step = 1.0 if minutes >= 10 else 0.5
    return math.ceil(minutes / step - 1e-9) * step
