#!/usr/bin/env python
"""Latency from start_model_training.delay() to the first visible progress on the job row.

Starts its own solo worker on the tests' settings (a scratch SQLite DB, Redis DB 12), imports
the 200-row demo slice, builds the tiny BERT, then for each run times:
  claimed   .delay() -> the row leaves "queued" (running, phase preparing: what the UI shows)
  step      .delay() -> the first training step is on the row
Target: first visible progress < 10 s.

    .venv/bin/python scripts/measure_first_progress.py [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="medlitbot-latency-"))
    os.environ.update(
        DJANGO_SETTINGS_MODULE="medlitbot_project.settings_test", MEDLITBOT_TEST_DIR=str(scratch),
        USE_SQLITE="True", SQLITE_PATH=str(scratch / "db.sqlite3"), TOKENIZERS_PARALLELISM="false",
    )
    # A Redis DB of its own, so a test suite running beside it cannot flush its messages.
    os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/12")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    import redis
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.files import File
    from django.core.management import call_command

    from classification.models import MLModel, TrainingJob
    from classification.tasks import start_model_training
    from dataset_management.services import dataset_create_from_upload
    from tests.tinybert import build_tiny_bert

    call_command("migrate", verbosity=0)
    redis.Redis.from_url(settings.CELERY_BROKER_URL).flushdb()
    user = get_user_model().objects.create_user(f"latency-{uuid.uuid4().hex[:6]}")
    with (ROOT / "tests" / "fixtures" / "demo_slice.csv").open("rb") as fh:
        dataset = dataset_create_from_upload(owner=user, uploaded_file=File(fh, name="slice.csv"),
                                             name="Slice")
    tiny = build_tiny_bert(scratch / "tiny-bert")
    log = (scratch / "worker.log").open("wb")
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "medlitbot_project", "worker", "--pool=solo",
         "--concurrency=1", "--without-gossip", "--without-mingle", "--loglevel=INFO"],
        cwd=ROOT, env=dict(os.environ), stdout=log, stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 90
        while " ready." not in (scratch / "worker.log").read_text(errors="replace"):
            if time.monotonic() > deadline or worker.poll() is not None:
                raise SystemExit("worker did not start")
            time.sleep(0.2)
        claimed, stepped = [], []
        for run in range(args.runs):
            model = MLModel.objects.create(
                name=f"latency {run}", model_type="custom", dataset=dataset,
                parameters={"model_path": str(tiny), "max_length": 64},
            )
            t0 = time.monotonic()
            start_model_training.delay(model.id, {"total_epochs": 1, "batch_size": 8,
                                                  "learning_rate": 1e-2})
            first = step = None
            while time.monotonic() - t0 < 120:
                job = TrainingJob.objects.filter(ml_model=model).first()
                if job and first is None and job.status != "queued":
                    first = time.monotonic() - t0
                if job and step is None and job.current_step > 0:
                    step = time.monotonic() - t0
                if job and job.status not in ("queued", "running"):
                    break
                time.sleep(0.02)
            claimed.append(first)
            stepped.append(step)
            print(f"run {run + 1}: first visible progress {first:.2f} s, first training step "
                  f"{step:.2f} s, job {job.status}")
        print(f"median: first visible progress {statistics.median(claimed):.2f} s "
              f"(target < 10 s), first training step {statistics.median(stepped):.2f} s")
        return 0 if statistics.median(claimed) < 10 else 1
    finally:
        worker.terminate()
        worker.wait(30)


if __name__ == "__main__":
    sys.exit(main())
