"""The maintenance sweep ends the evaluations that can make no more progress, each with a reason
in plain words: a running one whose worker process on this host is dead, one that another host
stopped writing progress for, a queued one whose message the broker lost. A live worker's job is
left alone, and a finished job's file goes after a day while its scores stay."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from classification.mlmodels.evaluation_jobs import evaluation_folder
from classification.mlmodels.evaluation_maintenance import (
    LOST_MESSAGE_REASON,
    evaluation_jobs_reap,
)
from classification.models import EvaluationJob, MLModel
from core.processes import hostname

pytestmark = pytest.mark.django_db
S = EvaluationJob.Status


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.fixture
def model(user: Any) -> MLModel:
    return MLModel.objects.create(owner=user, name="M", model_type="tfidf_logreg",
                                  status="trained", artifact_path="/nowhere")


def job(model: MLModel, **fields: Any) -> EvaluationJob:
    row = EvaluationJob.objects.create(ml_model=model, owner=model.owner, filename="f.csv",
                                       **fields)
    stamps = {k: fields[k] for k in ("updated_at", "created_at") if k in fields}
    if stamps:  # auto_now and auto_now_add ignore what create() was given
        EvaluationJob.objects.filter(pk=row.pk).update(**stamps)
    return row


def test_dead_and_silent_workers_jobs_fail_with_a_reason_and_a_live_ones_is_left(model) -> None:
    now = timezone.now()
    dead = job(model, status=S.RUNNING, worker_host=hostname(), worker_pid=dead_pid(),
               started_at=now, total=200, processed=40)
    silent = job(model, status=S.RUNNING, worker_host="elsewhere", worker_pid=1,
                 started_at=now - timedelta(minutes=20), updated_at=now - timedelta(minutes=10))
    live = job(model, status=S.RUNNING, worker_host=hostname(), worker_pid=os.getpid(),
               started_at=now + timedelta(seconds=5))

    ended = evaluation_jobs_reap(stale_seconds=300)

    assert set(ended) == {dead.pk.hex, silent.pk.hex}
    dead.refresh_from_db(), silent.refresh_from_db(), live.refresh_from_db()
    assert dead.status == silent.status == S.FAILED
    assert dead.reason == ("The inference worker stopped while evaluating (killed or "
                           "restarted) after 40 of 200 rows; evaluate again.")
    assert silent.reason.startswith("The inference worker stopped while evaluating (no "
                                    "progress from elsewhere for ")
    assert silent.reason.endswith("while it was reading the file; evaluate again.")
    assert live.status == S.RUNNING
    assert evaluation_jobs_reap(stale_seconds=300) == []  # idempotent


def test_a_queued_job_whose_message_is_gone_fails_and_a_fresh_one_waits(model) -> None:
    old = job(model, created_at=timezone.now() - timedelta(minutes=10))
    fresh = job(model)

    assert evaluation_jobs_reap(stale_seconds=300) == [old.pk.hex]

    old.refresh_from_db(), fresh.refresh_from_db()
    assert (old.status, old.reason) == (S.FAILED, LOST_MESSAGE_REASON)
    assert fresh.status == S.QUEUED


def test_a_finished_jobs_file_goes_after_a_day_and_its_scores_stay(model, media_root) -> None:
    kept = job(model, status=S.COMPLETED, result={"micro_f1": 0.9},
               finished_at=timezone.now() - timedelta(hours=2))
    gone = job(model, status=S.COMPLETED, result={"micro_f1": 0.8},
               finished_at=timezone.now() - timedelta(hours=25))
    for row in (kept, gone):
        folder = evaluation_folder(owner_id=row.owner_id, job_id=row.pk)
        folder.mkdir(parents=True)
        (folder / "input.csv").write_text("title;abstract;group\n")
        row.input_path = str((folder / "input.csv").relative_to(media_root))
        row.save(update_fields=["input_path"])

    evaluation_jobs_reap(stale_seconds=300)

    kept.refresh_from_db(), gone.refresh_from_db()
    assert (Path(media_root) / kept.input_path).is_file()
    assert gone.input_path == ""
    assert not evaluation_folder(owner_id=gone.owner_id, job_id=gone.pk).exists()
    assert gone.result == {"micro_f1": 0.8}
