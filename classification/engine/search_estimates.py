"""How long a search's next trial will take, so the schedule only starts what the budget fits.

The candidate's latest measured trial, scaled to the new settings' work, is the best guess;
before any trial of the kind has finished, the registry's speed figure for this device is.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from . import model_size, search_space
from .registry import ModelSpec

# How much faster than one CPU thread a transformer trial runs on each accelerator.
GPU_SPEEDUP = {"cuda": 25.0, "mps": 4.0}


def trial_seconds(*, spec: ModelSpec, settings: dict[str, Any], trials: list[Any],
                  device_plan: Any, rows: int, fits: int = 1, slowdown: float = 1.0,
                  cache: dict[Any, Any] | None = None, texts: list[str] | None = None,
                  work_ratio: float = 1.0) -> float:
    """Seconds a trial of `spec` at `settings` takes, given the study's `trials` so far, the
    `rows` (train and validation) each fit reads and scores, and the `fits` a trial makes
    (cross-validation's folds and the kept model's own fit). Before the kind has a measured
    trial, the registry's figure times `slowdown` (how much slower than their figures the
    other kinds ran here: a loaded machine).

    An embedding kind pays its encoder only for the `texts` the search's shared `cache` does
    not hold yet (an earlier trial's, or the disk cache's): a measured trial's time less what
    it spent embedding, plus the texts left at the measured seconds per text.

    `work_ratio`: for a kind that trains the user's own folder, its encoder's work per token
    over that of the model the registry's figure was measured on (model_size.work_ratio)."""
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
    return slowdown * prior_seconds(spec=spec, settings=settings, device_plan=device_plan,
                                    rows=rows if left is None else left, fits=fits,
                                    work_ratio=work_ratio)


def embedding_uncached(*, cache: dict[Any, Any], texts: list[str]) -> int:
    """How many of `texts` no embedding in a search's shared cache covers yet."""
    held = [v for k, v in cache.items() if isinstance(k, tuple) and k[:1] == ("embeddings",)]
    return sum(1 for t in dict.fromkeys(texts) if not any(t in h for h in held))


def prior_seconds(*, spec: ModelSpec, settings: dict[str, Any], device_plan: Any, rows: int,
                  fits: int = 1, work_ratio: float = 1.0) -> float:
    """The registry's speed figure for this device, for a trial nothing has measured yet,
    scaled by `work_ratio` (its overhead by model_size.overhead_share)."""
    units = search_space.work_units(spec, settings)
    threads = max(1, int(getattr(device_plan, "threads", 1) or 1))
    speed = spec.speed.samples_per_second_per_thread * threads ** 0.8
    speed *= GPU_SPEEDUP.get(str(getattr(device_plan, "device", "cpu")), 1.0)
    passes = 1.0 if spec.speed.single_pass else units * 128 / 256 + 1 / 3
    overhead = spec.speed.overhead_seconds * model_size.overhead_share(work_ratio)
    return overhead + fits * rows * passes * work_ratio / speed


def slowdown(*, trials: list[Any], device_plan: Any, rows: int,
             fits_of: Callable[[ModelSpec], int],
             work_ratio_of: Callable[[ModelSpec], float] = lambda spec: 1.0) -> float:
    """How many times slower than the registry's figures the finished default trials ran
    (at least 1): the largest ratio, so a loaded machine's first trial of a kind is not
    started on an estimate made for an idle one."""
    from .registry import REGISTRY

    ratios = []
    for t in trials:
        spec = REGISTRY.get(str(t.params.get("model_type")))
        seconds = t.user_attrs.get("seconds")
        if spec is None or t.value is None or not seconds or not t.user_attrs.get("default"):
            continue
        prior = prior_seconds(spec=spec, settings=search_space.unprefixed(t.params),
                              device_plan=device_plan, rows=rows, fits=fits_of(spec),
                              work_ratio=work_ratio_of(spec))
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
