"""The batch a job trains with on a CUDA GPU, and the learning rate that goes with it.

A small model at the form's batch of 16 leaves a GPU idle: on an H100 (MiniLM, bf16, 2,263
rows x 3 epochs; docs/figures/engine.md) the GPU was busy 5-9% of the time, each step bound by
host-side work (~500 kernel launches), so samples/s grew almost with the batch: 393 at 16, 620
at 32, 857 at 64, 1,268 at 128 in one run. Test macro-F1, mean of three seeds: 0.911 at 16;
at 32, 0.915 with the learning rate scaled by the square root of the batch ratio and 0.921
with it scaled linearly (Goyal et al., 2017), the plain Trainer's 0.926 at 8 being the mark;
single runs at 64 and 128 fell to 0.905-0.911 and 0.896 as the run got too few updates.

So the batch doubles from the requested one while the run keeps at least MIN_UPDATES optimiser
updates, the activations fit in a share of the free memory, and it stays at most MAX_BATCH;
the learning rate grows with it. It never goes below what was requested. A resumed run keeps
the batch its checkpoint trained with, so its step count means the same.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MAX_BATCH = 64
MIN_UPDATES = 200
MEMORY_SHARE = 0.5
# Activation bytes per token, hidden unit and layer in 16-bit mixed-precision training with
# fused attention (Korthikanti et al., 2022, without the sequence-squared term flash removes).
ACTIVATION_BYTES = 34


@dataclass(frozen=True)
class BatchChoice:
    batch_size: int
    learning_rate: float
    reason: str


def activation_bytes(*, batch: int, max_length: int, hidden: int, layers: int) -> int:
    return ACTIVATION_BYTES * batch * max_length * hidden * layers


def choose_batch(
    *, requested: int, learning_rate: float, rows: int, epochs: int, accumulation: int,
    max_length: int, hidden: int, layers: int, free_bytes: int, resumed_batch: int | None = None,
) -> BatchChoice:
    """Largest power-of-two multiple of `requested` within the three bounds above."""
    if resumed_batch:
        batch = resumed_batch
        why = f"batch {batch}, as the checkpoint this run resumes from trained with"
    else:
        batch = requested
        why = f"batch {requested} as requested"
        budget = MEMORY_SHARE * free_bytes
        while batch * 2 <= MAX_BATCH:
            bigger = batch * 2
            updates = rows * epochs / (bigger * accumulation)
            fits = activation_bytes(
                batch=bigger, max_length=max_length, hidden=hidden, layers=layers
            ) <= budget
            if updates < MIN_UPDATES or not fits:
                break
            batch = bigger
        if batch != requested:
            why = (f"batch {batch} instead of {requested}: the GPU idles at small batches, and "
                   f"{math.floor(rows * epochs / (batch * accumulation))} updates remain "
                   f"(at least {MIN_UPDATES} are kept)")
    lr = learning_rate * batch / requested
    if batch != requested:
        why += f"; learning rate {learning_rate:.2e} x {batch}/{requested} = {lr:.2e}"
    return BatchChoice(batch_size=batch, learning_rate=lr, reason=why)


def checkpoint_batch(checkpoint: str | None) -> int | None:
    """The per-device batch a Trainer checkpoint was trained with (trainer_state.json)."""
    import json
    from pathlib import Path

    if not checkpoint:
        return None
    try:
        state = json.loads((Path(checkpoint) / "trainer_state.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    batch = state.get("train_batch_size")
    return int(batch) if isinstance(batch, int) and batch > 0 else None
