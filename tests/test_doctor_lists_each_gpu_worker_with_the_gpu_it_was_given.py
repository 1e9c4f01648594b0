"""The doctor lists each live GPU training worker with the CUDA_VISIBLE_DEVICES it was started
with, warns about one started without a GPU index, and on an install without GPU workers says
the GPU queue is optional and how to start one worker per GPU, with no warning."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.utils import timezone

from classification import doctor
from core import services


def beat(hostname: str, queues: list[str], devices: str | None, pid: int) -> None:
    services.worker_heartbeat_beat(
        hostname=hostname, host="box", pid=pid, queues=queues, pool="solo", concurrency=1,
        started_at=timezone.now(), state="idle", facts={"devices": devices},
    )


def gpu_check() -> doctor.Check:
    return {c.name: c for c in doctor.check_workers()}[f"worker {settings.QUEUE_TRAINING_GPU}"]


@pytest.mark.django_db
def test_each_gpu_worker_is_listed_with_its_cuda_visible_devices() -> None:
    beat("training@box", [settings.QUEUE_TRAINING], None, 10)
    beat("gpu0@box", [settings.QUEUE_TRAINING_GPU], "0", 11)
    beat("gpu1@box", [settings.QUEUE_TRAINING_GPU], "1", 12)

    checks = {c.name: c for c in doctor.check_workers()}

    gpu = checks[f"worker {settings.QUEUE_TRAINING_GPU}"]
    assert gpu.status == doctor.OK
    assert "gpu0@box (solo, CUDA_VISIBLE_DEVICES=0) idle" in gpu.detail
    assert "gpu1@box (solo, CUDA_VISIBLE_DEVICES=1) idle" in gpu.detail
    assert "training@box (solo) idle" in checks[f"worker {settings.QUEUE_TRAINING}"].detail


@pytest.mark.django_db
def test_a_gpu_worker_started_without_a_gpu_index_is_a_warning() -> None:
    beat("gpu@box", [settings.QUEUE_TRAINING_GPU], None, 11)

    check = gpu_check()

    assert check.status == doctor.WARN
    assert "gpu@box (solo, CUDA_VISIBLE_DEVICES=unset)" in check.detail
    assert "restart each with CUDA_VISIBLE_DEVICES=<index>" in check.detail


@pytest.mark.django_db
def test_without_gpu_workers_the_doctor_says_how_to_start_one_per_gpu() -> None:
    beat("training@box", [settings.QUEUE_TRAINING], None, 10)

    check = gpu_check()

    assert check.status == doctor.OK
    assert "none (optional" in check.detail
    assert "CUDA_VISIBLE_DEVICES=$i" in check.detail
    assert f"--queues={settings.QUEUE_TRAINING_GPU}" in check.detail
    assert "--hostname=gpu$i@%h" in check.detail
