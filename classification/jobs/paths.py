"""Where a job keeps its checkpoints and where a model's artifact lives."""

from __future__ import annotations

import re
from pathlib import Path

from django.conf import settings

_CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")


def job_output_dir(job_id: int) -> Path:
    # One folder per job, kept across attempts: resume looks for checkpoints here.
    return Path(settings.MODEL_ARTIFACT_ROOT) / "jobs" / f"job-{job_id}"


def model_artifact_dir(model_id: int) -> Path:
    return Path(settings.MODEL_ARTIFACT_ROOT) / str(model_id)


def latest_checkpoint(output_dir: Path | str) -> str | None:
    """The highest-step complete checkpoint (its trainer_state.json is written last)."""
    folder = Path(output_dir)
    if not folder.is_dir():
        return None
    found = []
    for child in folder.iterdir():
        match = _CHECKPOINT.match(child.name)
        if match and child.is_dir() and (child / "trainer_state.json").is_file():
            found.append((int(match.group(1)), child))
    return str(max(found)[1]) if found else None
