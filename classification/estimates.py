"""A rough training-time estimate for the "New model" page.

Deliberately cheap: the web process must not import torch just to draw a form, so the device
comes from the last plan a training job recorded on this machine, or from the core count.
"""

from __future__ import annotations

import os
from typing import Any

from classification.models import TrainingJob

# Training samples per second per CPU thread at max_length=256, measured loosely on x86 CPUs.
# Baselines fit the whole set at once; "epochs" do not apply to them, so they use one pass.
SAMPLES_PER_SECOND_PER_THREAD: dict[str, float] = {
    "biobert": 0.9,
    "pubmedbert": 0.9,
    "scibert": 0.9,
    "clinicalbert": 0.9,
    "custom": 0.9,
    "minilm": 9.0,
    "minilm_embed_logreg": 40.0,
    "tfidf_logreg": 400.0,
    "tfidf_svm": 300.0,
}
SINGLE_PASS_TYPES = frozenset({"tfidf_logreg", "tfidf_svm", "minilm_embed_logreg"})
GPU_SPEEDUP = {"cuda": 25.0, "mps": 4.0, "cpu": 1.0}
FIXED_OVERHEAD_SECONDS = {"transformer": 20.0, "baseline": 2.0}


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


def training_seconds_estimate(
    *, model_type: str, rows: int, epochs: int, max_length: int, plan: dict[str, Any]
) -> float:
    rate = SAMPLES_PER_SECOND_PER_THREAD.get(model_type, 1.0)
    threads = max(1, int(plan.get("threads") or 1))
    # Threads help sub-linearly (memory bandwidth); longer sequences cost about linearly.
    rate *= threads**0.8 * GPU_SPEEDUP.get(str(plan.get("device", "cpu")), 1.0)
    passes = 1 if model_type in SINGLE_PASS_TYPES else max(1, epochs)
    length_factor = 1.0 if model_type in SINGLE_PASS_TYPES else max(32, max_length) / 256
    kind = "baseline" if model_type in SINGLE_PASS_TYPES else "transformer"
    overhead = FIXED_OVERHEAD_SECONDS[kind]
    return overhead + rows * passes * length_factor / rate


def observed_rates(*, plan: dict[str, Any], limit: int = 30) -> dict[str, float]:
    """Per-thread samples/s at 256 tokens, measured from this machine's finished trainings.

    The same normalisation as training_seconds_estimate, run backwards, so the page's formula
    can use a measured rate in place of the table's guess. Runs shorter than twice the fixed
    overhead are skipped: their duration is mostly loading, not training.
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
        if model_type in found or not sizes or not sizes.get("train"):
            continue
        single = model_type in SINGLE_PASS_TYPES
        overhead = FIXED_OVERHEAD_SECONDS["baseline" if single else "transformer"]
        seconds = (finished - started).total_seconds() - overhead
        if seconds < overhead:
            continue
        passes = 1 if single else max(1.0, float(epochs or (config or {}).get("epochs") or 1))
        length = 1.0 if single else max(32, int((config or {}).get("max_length") or 256)) / 256
        found[model_type] = sizes["train"] * passes * length / seconds / scale
    return found

