"""A batch never queues behind a training: with the solo training worker busy for many steps, a
batch of 2,000 demo abstracts finishes on the inference worker before the training ends."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from django.conf import settings

from classification import services
from classification.models import BatchJob, TrainingJob
from tests.batch_support import DEMO_CSV, create_batch, start_inference_worker, wait_for_batch
from tests.job_support import fast_env, tiny_bert_config, wait_for_job, wait_for_step


def first_rows(source: Path, target: Path, count: int) -> Path:
    with source.open(encoding="utf-8-sig", newline="") as f_in:
        rows = list(csv.reader(f_in, delimiter=";"))[: count + 1]
    with target.open("w", encoding="utf-8", newline="") as f_out:
        csv.writer(f_out, delimiter=";").writerows(rows)
    return target


@pytest.mark.worker
def test_a_batch_of_2000_abstracts_finishes_while_the_training_worker_is_busy(
    start_worker, slice_dataset, trained_model, tiny_bert_dir, user, tmp_path
) -> None:
    training_worker = start_worker(
        queues=(settings.QUEUE_TRAINING,), **fast_env(MEDLITBOT_FAULT_INJECTION="slow_step=0.5")
    )
    inference_worker = start_inference_worker(start_worker)
    job = services.training_job_create(
        owner=user, dataset=slice_dataset, model_type="custom", name="Slow tiny BERT",
        config=tiny_bert_config(tiny_bert_dir, epochs=3),
    )
    wait_for_step(job, step=1, timeout=120)

    articles = first_rows(DEMO_CSV, tmp_path / "two-thousand.csv", 2000)
    batch = wait_for_batch(create_batch(owner=user, ml_model=trained_model, path=articles),
                           timeout=120)

    job.refresh_from_db()
    assert batch.status == BatchJob.Status.COMPLETED, batch.reason
    assert batch.processed == batch.total == 2000
    assert batch.worker_pid == inference_worker.pid
    assert job.status == TrainingJob.Status.RUNNING, "the training was still going"
    assert job.worker_pid == training_worker.pid
    assert 0 < job.current_step < job.total_steps

    services.training_job_cancel(job=job)  # no need to sit through the rest of it
    wait_for_job(job, {"cancelled"}, timeout=60)
