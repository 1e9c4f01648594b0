"""A rough training-time estimate for the "New model" page.

Deliberately cheap: the web process must not import torch just to draw a form, so the device
comes from the last plan a training job recorded on this machine, or from the core count.
"""

from __future__ import annotations

import os
from typing import Any

from classification.engine.registry import REGISTRY
from classification.models import TrainingJob

# The registry's speed figures, in the shape the New model page's script reads.
SAMPLES_PER_SECOND_PER_THREAD: dict[str, float] = {
    key: spec.speed.samples_per_second_per_thread for key, spec in REGISTRY.items()
}
SINGLE_PASS_TYPES = frozenset(key for key, spec in REGISTRY.items() if spec.speed.single_pass)
OVERHEAD_SECONDS: dict[str, float] = {
    key: spec.speed.overhead_seconds for key, spec in REGISTRY.items()
}
GPU_SPEEDUP = {"cuda": 25.0, "mps": 4.0, "cpu": 1.0}


def device_plan_summary() -> dict[str, Any]:
    """The most recent device plan a job recorded; else a CPU guess from the core count."""
    plan = (
        TrainingJob.objects.exclude(device_plan={})
        .order_by("-created_at")
        .values_list("device_plan", flat=True)
        .first()
    )
    if plan:
        return {**plan, "source": "recorded by the last training job on this machine"}
    try:
        threads = len(os.sched_getaffinity(0))
    except AttributeError:
        threads = os.cpu_count() or 1
    return {
        "device": "cpu",
        "threads": threads,
        "dtype": "float32",
        "reason": "no job has run yet; assuming CPU with all available cores",
        "source": "guessed from the core count",
    }


def observed_rates(*, plan: dict[str, Any], limit: int = 30) -> dict[str, float]:
    """Per-thread samples/s at 256 tokens, measured from this machine's finished trainings.

    The page's formula (registry.Speed) run backwards, so it can use a measured rate in place of
    the registry's guess. Runs shorter than twice the fixed overhead are skipped: their duration
    is mostly loading, not training.
    """
    rows = (
        TrainingJob.objects.filter(status=TrainingJob.Status.COMPLETED,
                                   started_at__isnull=False, finished_at__isnull=False)
        .order_by("-finished_at")
        .values_list("ml_model__model_type", "ml_model__dataset__split_sizes", "config",
                     "current_epoch", "started_at", "finished_at")[:limit]
    )
    threads = max(1, int(plan.get("threads") or 1))
    scale = threads**0.8 * GPU_SPEEDUP.get(str(plan.get("device", "cpu")), 1.0)
    found: dict[str, float] = {}
    for model_type, sizes, config, epochs, started, finished in rows:
        spec = REGISTRY.get(model_type)
        if spec is None or model_type in found or not sizes or not sizes.get("train"):
            continue
        single, overhead = spec.speed.single_pass, spec.speed.overhead_seconds
        seconds = (finished - started).total_seconds() - overhead
        if seconds < overhead:
            continue
        passes = 1 if single else max(1.0, float(epochs or (config or {}).get("epochs") or 1))
        length = 1.0 if single else max(32, int((config or {}).get("max_length") or 256)) / 256
        found[model_type] = sizes["train"] * passes * length / seconds / scale
    return found

