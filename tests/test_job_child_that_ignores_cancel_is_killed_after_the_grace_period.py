"""A training process that never honours cancel_requested is killed once CANCEL_GRACE_SECONDS
have passed, and the job ends cancelled with a reason that says so."""

from __future__ import annotations

import io
import time
from pathlib import Path

import psutil
import pytest
from django.core.management import call_command

from tests.job_support import (
    DONE,
    FAST,
    assert_untouched,
    dataset_digest,
    start_faulty_job,
    wait_for,
    wait_for_job,
    wait_for_step,
)


@pytest.mark.worker
def test_a_child_ignoring_cancel_is_killed_after_the_grace_period(
    start_worker, slice_dataset, earlier_model, tiny_bert_dir: Path, user
) -> None:
    digest = dataset_digest(slice_dataset)
    job = start_faulty_job(start_worker, slice_dataset, tiny_bert_dir, user,
                           faults="ignore_cancel,slow_step=0.3", name="Stubborn", epochs=3)
    wait_for_step(job, 2)
    asked = time.monotonic()
    call_command("stop_training", str(job.pk), stdout=io.StringIO())
    job = wait_for_job(job, DONE, 60)
    grace = float(FAST["CANCEL_GRACE_SECONDS"])
    assert grace <= time.monotonic() - asked <= 2 * grace + 2
    assert job.status == "cancelled", job.reason
    assert f"ignored the request for {grace:.0f} s" in job.reason
    assert "was killed" in job.reason
    wait_for(lambda: not psutil.pid_exists(job.child_pid), 10, "the stubborn child to be killed")
    assert_untouched(slice_dataset, digest, earlier_model)
