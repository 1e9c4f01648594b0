"""Where a job keeps its checkpoints and where a model's artifact lives."""

from __future__ import annotations

import re
from pathlib import Path

from django.conf import settings

_CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")
# Trainer writes a checkpoint's trainer_state.json after its weights, optimizer and RNG state,
# so a folder without it is a save that was cut off (a kill, a full disk) and cannot be resumed.
COMPLETE_MARKER = "trainer_state.json"
NOTHING_TO_RESUME = "nothing to resume from: it will start over"


def job_output_dir(job_id: int) -> Path:
    # One folder per job, kept across attempts: resume looks for checkpoints here.
    return Path(settings.MODEL_ARTIFACT_ROOT) / "jobs" / f"job-{job_id}"


def model_artifact_dir(model_id: int) -> Path:
    return Path(settings.MODEL_ARTIFACT_ROOT) / str(model_id)


def checkpoint_step(name: str) -> int | None:
    """The step a checkpoint folder's name says ("checkpoint-12" -> 12); None for other names."""
    match = _CHECKPOINT.match(name)
    return int(match.group(1)) if match else None


def checkpoint_dirs(output_dir: Path | str) -> list[tuple[int, Path, bool]]:
    """Every checkpoint-N folder as (step, path, complete), lowest step first."""
    folder = Path(output_dir)
    if not folder.is_dir():
        return []
    found = []
    for child in folder.iterdir():
        step = checkpoint_step(child.name)
        if step is not None and child.is_dir():
            found.append((step, child, (child / COMPLETE_MARKER).is_file()))
    return sorted(found)


def latest_checkpoint(output_dir: Path | str) -> str | None:
    """The highest-step complete checkpoint (its trainer_state.json is written last)."""
    complete = [path for _step, path, done in checkpoint_dirs(output_dir) if done]
    return str(complete[-1]) if complete else None


def resume_note(*, job_id: int) -> str:
    """What a resume of this job would start from, read from the disk as it is now.

    Call it once the training process is gone: only then is the newest complete checkpoint
    final, rather than a guess about a save that may still be under way.
    """
    checkpoint = latest_checkpoint(job_output_dir(job_id))
    if checkpoint is None:
        return NOTHING_TO_RESUME
    return f"resume continues from {Path(checkpoint).name}, the newest complete checkpoint"
