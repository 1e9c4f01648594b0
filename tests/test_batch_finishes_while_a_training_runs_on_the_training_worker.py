"""A batch never queues behind a training: with the solo training worker busy for many steps, a
batch of 2,000 demo abstracts finishes on the inference worker before the training ends, its
progress followed over HTTP from the real web server, which is restarted in the middle."""

from __future__ import annotations

import csv
import json
import urllib.request
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client

from classification import services
from classification.models import BatchJob, TrainingJob
from tests.batch_support import DEMO_CSV, create_batch, start_inference_worker, wait_for_batch
from tests.job_support import fast_env, tiny_bert_config, wait_for, wait_for_job, wait_for_step


def first_rows(source: Path, target: Path, count: int) -> Path:
    with source.open(encoding="utf-8-sig", newline="") as f_in:
        rows = list(csv.reader(f_in, delimiter=";"))[: count + 1]
    with target.open("w", encoding="utf-8", newline="") as f_out:
        csv.writer(f_out, delimiter=";").writerows(rows)
    return target


def progress_over_http(server, batch: BatchJob, cookie: str) -> dict:
    request = urllib.request.Request(
        f"{server.url}/classify/batches/{batch.pk.hex}/progress/", headers={"Cookie": cookie})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


@pytest.mark.worker
def test_a_batch_of_2000_abstracts_finishes_while_the_training_worker_is_busy(
    start_worker, start_app_server, slice_dataset, trained_model, tiny_bert_dir, user, tmp_path
) -> None:
    training_worker = start_worker(
        queues=(settings.QUEUE_TRAINING,), **fast_env(MEDLITBOT_FAULT_INJECTION="slow_step=0.5")
    )
    # Slow chunks (~10 s in all), so the web server can be restarted while the batch runs.
    inference_worker = start_inference_worker(
        start_worker, MEDLITBOT_FAULT_INJECTION="slow_batch_chunk=0.3")
    server = start_app_server()
    browser = Client()
    browser.force_login(user)
    cookie = f"sessionid={browser.cookies['sessionid'].value}"
    job = services.training_job_create(
        owner=user, dataset=slice_dataset, model_type="custom", name="Slow tiny BERT",
        config=tiny_bert_config(tiny_bert_dir, epochs=6), staff=True,
    )
    wait_for_step(job, step=1, timeout=240)

    articles = first_rows(DEMO_CSV, tmp_path / "two-thousand.csv", 2000)
    batch = create_batch(owner=user, ml_model=trained_model, path=articles)
    before = wait_for(lambda: (p := progress_over_http(server, batch, cookie))["processed"] and p,
                      120, "live progress from the web server")
    assert before["status"] == "running"
    assert 0 < before["progress"] < 100

    server.restart()  # a deploy or a crash of the web tier, mid-batch
    after = progress_over_http(server, batch, cookie)
    assert after["processed"] >= before["processed"]
    assert after["status"] in ("running", "completed")
    batch = wait_for_batch(batch, timeout=120)

    job.refresh_from_db()
    assert batch.status == BatchJob.Status.COMPLETED, batch.reason
    assert batch.processed == batch.total == 2000
    assert batch.worker_pid == inference_worker.pid
    assert job.status == TrainingJob.Status.RUNNING, "the training was still going"
    assert job.worker_pid == training_worker.pid
    assert 0 < job.current_step < job.total_steps

    services.training_job_cancel(job=job)  # no need to sit through the rest of it
    wait_for_job(job, {"cancelled"}, timeout=60)
