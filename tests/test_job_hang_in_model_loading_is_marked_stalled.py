"""A hang while the model loads (heartbeats continue, progress stops) ends as stalled, naming the
phase, within twice the stall floor; the hung child is gone and nothing else is touched."""

from __future__ import annotations

import time
from pathlib import Path

import psutil
import pytest

from classification import services
from tests.job_support import (
    FAST,
    assert_untouched,
    dataset_digest,
    fast_env,
    tiny_bert_config,
    wait_for,
    wait_for_job,
)


@pytest.mark.worker
def test_a_hang_in_model_loading_is_marked_stalled_within_twice_the_floor(
    start_worker, slice_dataset, earlier_model, tiny_bert_dir: Path, user
) -> None:
    digest = dataset_digest(slice_dataset)
    start_worker(**fast_env(MEDLITBOT_FAULT_INJECTION="hang_in_loading"))
    job = services.training_job_create(
        owner=user, dataset=slice_dataset, model_type="custom", name="Hangs",
        config=tiny_bert_config(tiny_bert_dir),
    )

    def loading() -> bool:
        job.refresh_from_db()
        return job.phase == "loading_model"

    wait_for(loading, 60, "the loading phase", poll=0.05)
    hung_at = time.monotonic()
    job = wait_for_job(job, {"completed", "failed", "stalled", "cancelled"}, 60)
    floor = float(FAST["STALL_TIMEOUT_FLOOR"])
    assert time.monotonic() - hung_at <= 2 * floor
    assert job.status == "stalled", job.reason
    assert job.reason.startswith("Stalled in model loading: no progress for"), job.reason
    assert job.child_pid
    # The row is fenced first, then the child is terminated and killed: it is gone soon after.
    wait_for(lambda: not psutil.pid_exists(job.child_pid), 10, "the hung child to be killed")
    assert_untouched(slice_dataset, digest, earlier_model)
