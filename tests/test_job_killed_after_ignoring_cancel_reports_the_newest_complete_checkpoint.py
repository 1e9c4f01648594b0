"""A training process that ignores a cancel is killed once its grace has passed, a grace derived
from its step time and its measured checkpoint save (here longer than CANCEL_GRACE_SECONDS), and
the reason names the newest complete checkpoint on disk after the kill, the only one kept."""

from __future__ import annotations

import io
import re
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from django.core.management import call_command

from classification import paths
from tests.job_support import DONE, FAST, start_faulty_job, wait_for, wait_for_job

SAVE_SECONDS = 3.0


@pytest.mark.worker
def test_a_child_killed_for_ignoring_cancel_reports_the_newest_complete_checkpoint_on_disk(
    start_worker: Any, slice_dataset: Any, tiny_bert_dir: Path, user: Any, settings: Any,
    tmp_path: Path,
) -> None:
    settings.MODEL_ARTIFACT_ROOT = tmp_path / "artifacts"
    job = start_faulty_job(start_worker, slice_dataset, tiny_bert_dir, user,
                           faults=f"ignore_cancel,slow_step=0.3,slow_save={SAVE_SECONDS}",
                           name="Stubborn", epochs=3)
    folder = paths.job_output_dir(job.pk)

    def first_checkpoint_kept() -> bool:
        job.refresh_from_db()
        assert job.status in ("queued", "running"), (job.reason, job.log_tail)
        return paths.latest_checkpoint(folder) is not None and job.phase == "training"

    wait_for(first_checkpoint_kept, 120, "the first epoch's checkpoint")
    asked = time.monotonic()
    call_command("stop_training", str(job.pk), stdout=io.StringIO())
    job = wait_for_job(job, DONE, 90)
    waited = time.monotonic() - asked

    assert job.status == "cancelled", job.reason
    assert "was killed" in job.reason
    grace = float(re.search(r"ignored the request for (\d+) s", job.reason).group(1))
    floor = float(FAST["CANCEL_GRACE_SECONDS"])
    assert grace >= 2 * SAVE_SECONDS > floor  # the measured save stretched it past the setting
    assert "a checkpoint save of ~3." in job.reason
    assert grace - 1 <= waited <= grace + 8
    wait_for(lambda: not psutil.pid_exists(job.child_pid), 10, "the stubborn child to be killed")

    newest = paths.latest_checkpoint(folder)
    assert newest is not None
    name = Path(newest).name
    assert f"resume continues from {name}, the newest complete checkpoint" in job.reason
    assert Path(job.checkpoint_path) == Path(newest)
    # Only the newest complete checkpoint stays for the resume; older and cut-off saves are gone.
    assert [p.name for p in folder.iterdir() if p.name.startswith("checkpoint-")] == [name]
