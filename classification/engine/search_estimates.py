"""How long a search's next trial will take, so the schedule only starts what the budget fits.

The candidate's latest measured trial, scaled to the new settings' work, is the best guess;
before any trial of the kind has finished, the registry's speed figure for this device is.
"""

from __future__ import annotations

from typing import Any

from . import search_space
from .registry import ModelSpec

# How much faster than one CPU thread a transformer trial runs on each accelerator.
GPU_SPEEDUP = {"cuda": 25.0, "mps": 4.0}


def trial_seconds(*, spec: ModelSpec, settings: dict[str, Any], trials: list[Any],
                  device_plan: Any, rows: int, fits: int = 1) -> float:
    """Seconds a trial of `spec` at `settings` takes, given the study's `trials` so far, the
    `rows` (train and validation) each fit reads and scores, and the `fits` a trial makes
    (cross-validation's folds and the kept model's own fit)."""
    units = search_space.work_units(spec, settings)
    measured = [t for t in trials if t.params.get("model_type") == spec.key
                and t.user_attrs.get("seconds") and t.value is not None]
    if measured:
        last = measured[-1]
        done = search_space.work_units(spec, search_space.unprefixed(last.params))
        return float(last.user_attrs["seconds"]) * units / done
    threads = max(1, int(getattr(device_plan, "threads", 1) or 1))
    speed = spec.speed.samples_per_second_per_thread * threads ** 0.8
    speed *= GPU_SPEEDUP.get(str(getattr(device_plan, "device", "cpu")), 1.0)
    passes = 1.0 if spec.speed.single_pass else units * 128 / 256 + 1 / 3
    return spec.speed.overhead_seconds + fits * rows * passes / speed
