"""The doctor lists which worker serves each queue, from the heartbeat rows; a queue without a
live worker is a warning (the doctor also runs before workers start), never a blocker."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.utils import timezone

from classification import doctor
from core import services


@pytest.mark.django_db
def test_the_doctor_reports_the_live_training_worker_and_warns_about_missing_ones() -> None:
    services.worker_heartbeat_beat(
        hostname="training@box", host="box", pid=5, queues=[settings.QUEUE_TRAINING],
        pool="solo", concurrency=1, started_at=timezone.now(), state="busy",
        current_job="training job 4",
    )

    checks = {c.name: c for c in doctor.check_workers()}

    training = checks[f"worker {settings.QUEUE_TRAINING}"]
    assert training.status == doctor.OK
    assert "training@box (solo) busy: training job 4" in training.detail
    inference = checks[f"worker {settings.QUEUE_INFERENCE}"]
    assert inference.status == doctor.WARN
    assert f"no worker has ever served queue {settings.QUEUE_INFERENCE}" in inference.detail
    lines: list[str] = []
    assert doctor.main(["--smoke-timeout", "60"], write=lines.append) == 0
    text = "\n".join(lines)
    assert f"worker {settings.QUEUE_TRAINING}" in text
    assert "0 blocker(s)" in text
