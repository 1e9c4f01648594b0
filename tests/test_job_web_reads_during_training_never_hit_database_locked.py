"""On SQLite, pages reading (and writing sessions) while the child writes progress and heartbeats
as fast as it can never fail with "database is locked"."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.db import OperationalError, connection, connections
from django.utils import timezone

from classification import services
from classification.models import TrainingJob
from tests.job_support import (
    DONE,
    fast_env,
    tiny_bert_config,
    wait_for_job,
)


@pytest.mark.worker
def test_reads_and_writes_from_the_web_side_never_see_database_locked(
    start_worker, slice_dataset, tiny_bert_dir: Path, user
) -> None:
    if connection.vendor != "sqlite":
        pytest.skip("a SQLite locking test")
    # Not a stall test: three hammering threads can slow the child's torch import past the
    # fast 20 s floor on a 2-core machine, so give preparation a minute.
    start_worker(**fast_env(PROGRESS_WRITE_INTERVAL="0", HEARTBEAT_INTERVAL="0.05",
                            STALL_TIMEOUT_FLOOR="60", STALL_TIMEOUT_CEILING="90"))
    job = services.training_job_create(
        owner=user, dataset=slice_dataset, model_type="custom", name="Busy",
        config=tiny_bert_config(tiny_bert_dir, epochs=1), staff=True,
    )
    errors: list[BaseException] = []
    counts = {"reads": 0, "writes": 0}
    stop = threading.Event()

    def hammer() -> None:
        try:
            while not stop.is_set():
                row = TrainingJob.objects.filter(pk=job.pk).values(
                    "status", "progress_percentage", "log_tail", "metrics_history"
                ).first()
                counts["reads"] += 1
                assert row is not None
                # The web writes too (sessions, last_login): one small write per few reads.
                if counts["reads"] % 5 == 0:
                    get_user_model().objects.filter(pk=user.pk).update(last_login=timezone.now())
                    counts["writes"] += 1
        except OperationalError as exc:
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=hammer) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        job = wait_for_job(job, DONE, 300)
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    assert not errors, errors
    assert job.status == "completed", (job.reason, job.log_tail)
    assert counts["reads"] > 100
    assert counts["writes"] > 20
