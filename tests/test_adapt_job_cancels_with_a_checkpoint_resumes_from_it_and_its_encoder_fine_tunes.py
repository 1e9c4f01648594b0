"""An adapt job on a real worker: cancelled while training it stops with a checkpoint, resumed
it continues from that checkpoint and saves its encoder with the held-out perplexity before and
after, and the `adapted` type then fine-tunes that encoder like any transformer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from classification import services
from classification.jobs import adapt
from tests.job_support import DONE, fast_env, wait_for, wait_for_job


@pytest.mark.worker
def test_an_adapt_job_cancels_resumes_and_its_encoder_is_fine_tuned(
    start_worker: Any, slice_dataset: Any, tiny_bert_dir: Path, user: Any
) -> None:
    start_worker(**fast_env(MEDLITBOT_FAULT_INJECTION="slow_step=0.2"))
    job = adapt.adapt_job_create(
        owner=user, datasets=[slice_dataset], batches=[], staff=True, name="Adapted tiny",
        config={"adapt_base": "custom", "model_path": str(tiny_bert_dir), "epochs": 1,
                "batch_size": 8, "learning_rate": 3e-3, "max_length": 64},
    )

    def stepping() -> bool:
        job.refresh_from_db()
        return job.phase == "training" and job.current_step >= 3

    wait_for(stepping, 240, "adaptation steps", poll=0.05)
    services.training_job_cancel(job=job, actor=user)
    job = wait_for_job(job, DONE, 30)
    assert job.status == "cancelled", (job.reason, job.log_tail)
    assert "checkpoint saved" in job.reason
    assert Path(job.checkpoint_path, "trainer_state.json").is_file()
    stopped_at = job.current_step

    services.training_job_resume(job=job, actor=user)
    job = wait_for_job(job, DONE, 240)
    assert job.status == "completed", (job.reason, job.log_tail)
    assert "attempt 2: resuming from checkpoint-" in job.log_tail
    assert job.current_step == job.total_steps > stopped_at
    encoder = job.ml_model
    encoder.refresh_from_db()
    metrics = encoder.metrics
    assert metrics["perplexity_after"] < metrics["perplexity_before"], metrics
    assert metrics["corpus"]["test_rows_left_out"] > 0
    assert Path(encoder.artifact_path, "config.json").is_file()

    tuned = services.training_job_create(
        owner=user, dataset=slice_dataset, model_type="adapted", name="Tuned",
        config={"encoder_model_id": encoder.pk, "epochs": 1, "batch_size": 8,
                "learning_rate": 1e-2, "max_length": 64, "early_stopping_patience": 0},
    )
    tuned = wait_for_job(tuned, DONE, 240)
    assert tuned.status == "completed", (tuned.reason, tuned.log_tail)
    assert tuned.ml_model.metrics.get("evaluated_on") == "test"
