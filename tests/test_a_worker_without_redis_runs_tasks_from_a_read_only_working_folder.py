"""A worker without Redis (the container entrypoint's filesystem broker) keeps every folder of its
broker, the control folder of broadcasts included, in CELERY_FILESYSTEM_BROKER_DIR. kombu's
default puts that one in the working folder, which in the image is /app and not writable by
its user: the worker crashed at start with PermissionError: 'control'."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from celery import Celery
from django.conf import settings

from core.models import WorkerPing
from tests.plugins.worker import ROOT, worker_env


def transport_options(broker: Path) -> dict[str, object]:
    return {"data_folder_in": str(broker), "data_folder_out": str(broker),
            "processed_folder": str(broker / "processed"),
            "control_folder": str(broker / "control"), "store_processed": False}


def unwritable_folder(tmp_path: Path) -> Path:
    """A working folder the worker cannot write in, as /app is to the image's user: a folder
    without write permission, or /sys for root, whom no mode bits stop."""
    if os.geteuid() == 0:
        return Path("/sys")
    folder = tmp_path / "app"
    folder.mkdir()
    folder.chmod(0o555)
    return folder


@pytest.mark.django_db(transaction=True)
def test_a_worker_on_the_filesystem_broker_starts_in_a_read_only_folder_and_runs_a_task(
        tmp_path: Path) -> None:
    broker = tmp_path / "broker"
    (broker / "processed").mkdir(parents=True)
    cwd = unwritable_folder(tmp_path)
    log_path = tmp_path / "worker.log"
    env = worker_env(
        CELERY_BROKER_URL="filesystem://", CELERY_FILESYSTEM_BROKER_DIR=str(broker),
        # Nothing answers there: neither the broker nor the cache may need Redis.
        REDIS_URL="redis://127.0.0.1:1/0", CACHE_URL="", PYTHONPATH=str(ROOT))
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "medlitbot_project", "worker", "--pool=solo",
         f"--queues={settings.QUEUE_DEFAULT}", "--without-gossip", "--without-mingle",
         "--loglevel=INFO", f"--hostname=nofs-{uuid.uuid4().hex[:8]}@%h"],
        cwd=cwd, env=env, stdout=log_path.open("wb"), stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while " ready." not in log_path.read_text(errors="replace"):
            assert worker.poll() is None, log_path.read_text(errors="replace")
            assert time.monotonic() < deadline, log_path.read_text(errors="replace")
            time.sleep(0.3)
        # Not the current app: shared tasks and broker reads in this process must keep Redis.
        sender = Celery("filesystem-sender", broker="filesystem://", set_as_current=False)
        sender.conf.broker_transport_options = transport_options(broker)
        token = uuid.uuid4().hex
        sender.send_task("core.worker_ping", args=[token], queue=settings.QUEUE_DEFAULT)
        deadline = time.monotonic() + 60
        while not WorkerPing.objects.filter(token=token).exists():
            assert worker.poll() is None, log_path.read_text(errors="replace")
            assert time.monotonic() < deadline, log_path.read_text(errors="replace")
            time.sleep(0.3)
    finally:
        worker.terminate()
        worker.wait(timeout=30)
    assert (broker / "control").is_dir()
    assert not (cwd / "control").exists()
