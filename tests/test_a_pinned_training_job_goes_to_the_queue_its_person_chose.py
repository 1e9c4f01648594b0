"""device_queue pins a job: "cpu" keeps it off a live GPU worker; "gpu" sends it to the GPU queue
even when no GPU worker runs, and its log says it waits for one. The setting comes in through
every door (form, API, train_model) with the same refusal of a value it does not know."""

from __future__ import annotations

import io
import json

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from classification import services
from classification.models import MLModel, TrainingJob
from core import services as core_services
from core.broker import broker_task_ids


def gpu_worker() -> None:
    core_services.worker_heartbeat_beat(
        hostname="gpu0@box", host="box", pid=321, queues=[settings.QUEUE_TRAINING_GPU],
        pool="solo", concurrency=1, started_at=timezone.now(), state="idle",
        facts={"devices": "0"},
    )


def create_job(dataset, user, capture, device_queue: str) -> TrainingJob:
    with capture(execute=True):  # the real enqueue, sent to Redis on commit
        return services.training_job_create(
            owner=user, dataset=dataset, model_type="tfidf_logreg", name="Pinned",
            config={"device_queue": device_queue},
        )


@pytest.mark.django_db
def test_a_job_pinned_to_the_cpu_skips_a_live_gpu_worker(
    clean_broker, slice_dataset, user, django_capture_on_commit_callbacks
) -> None:
    gpu_worker()

    job = create_job(slice_dataset, user, django_capture_on_commit_callbacks, "cpu")

    assert job.queue == settings.QUEUE_TRAINING
    assert job.celery_task_id in broker_task_ids(queue=settings.QUEUE_TRAINING)
    assert job.celery_task_id not in broker_task_ids(queue=settings.QUEUE_TRAINING_GPU)
    assert "pinned to the CPU workers" in job.log_tail


@pytest.mark.django_db
def test_a_job_pinned_to_the_gpu_waits_there_and_says_so_when_no_gpu_worker_runs(
    clean_broker, slice_dataset, user, django_capture_on_commit_callbacks, alice_client
) -> None:
    job = create_job(slice_dataset, user, django_capture_on_commit_callbacks, "gpu")

    assert job.queue == settings.QUEUE_TRAINING_GPU
    assert job.celery_task_id in broker_task_ids(queue=settings.QUEUE_TRAINING_GPU)
    assert job.log_tail.splitlines()[0].endswith("waits for a GPU worker to start")
    page = alice_client.get(reverse("classification:job_detail", args=[job.pk])).content.decode()
    assert f"<code>{settings.QUEUE_TRAINING_GPU}</code> (GPU workers)" in page
    assert "Number 1 of 1 in the GPU training queue: it starts when a GPU worker is free" in page


@pytest.mark.django_db
def test_every_door_takes_the_pin_and_refuses_an_unknown_one(
    user, rows, api_token, alice_client, django_capture_on_commit_callbacks
) -> None:
    dataset = rows.dataset(user)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {api_token}")
    message = "Choose one of auto, gpu, cpu."

    page = alice_client.post(reverse("classification:model_new"), {
        "dataset": dataset.pk, "model_type": "tfidf_logreg", "preset": "quick",
        "device_queue": "tpu"}).content.decode()
    assert message in page
    refused = api.post("/api/jobs/", {"dataset": dataset.pk, "model_type": "tfidf_logreg",
                                      "config": {"device_queue": "tpu"}}, format="json")
    assert (refused.status_code, refused.json()) == (400, {"config": {"device_queue": [message]}})
    with pytest.raises(CommandError, match=f"--device-queue: {message}"):
        call_command("train_model", "--dataset", str(dataset.pk), "--type", "tfidf_logreg",
                     "--device-queue", "tpu")
    assert not MLModel.objects.exists()

    with django_capture_on_commit_callbacks(execute=False):
        form = alice_client.post(reverse("classification:model_new"), {
            "dataset": dataset.pk, "model_type": "tfidf_logreg", "preset": "quick",
            "device_queue": "cpu"})
        created = api.post("/api/jobs/", {"dataset": dataset.pk, "model_type": "tfidf_logreg",
                                          "config": {"device_queue": "gpu"}}, format="json")
        call_command("train_model", "--dataset", str(dataset.pk), "--type", "tfidf_logreg",
                     "--device-queue", "GPU", stdout=io.StringIO())
    assert form.status_code == 302
    assert created.status_code == 201
    assert created.json()["queue"] == settings.QUEUE_TRAINING_GPU
    pins = list(TrainingJob.objects.order_by("pk").values_list("config", "queue"))
    assert [(config["device_queue"], queue) for config, queue in pins] == [
        ("cpu", settings.QUEUE_TRAINING), ("gpu", settings.QUEUE_TRAINING_GPU),
        ("gpu", settings.QUEUE_TRAINING_GPU)]
    docs = json.dumps(api.get("/api/schema/?format=json").json())
    assert "`device_queue`: str (auto, gpu or cpu), default 'auto'" in docs
