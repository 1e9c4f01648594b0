"""With the broker unreachable, starting or resuming a training answers at once that the job
queue is unreachable and nothing was started: 503 from the API and the web form (served by the
real gunicorn), a one-line error from the commands. A new job leaves no row behind (no model, no
job, no activity line: "nothing was started" holds); a resumed one does not stay queued for a
message that was never sent: it ends failed with that reason, and so does its model."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import time
import urllib.parse

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from api.tokens import token_create
from classification.models import MLModel, TrainingJob
from core.queueing import UNREACHABLE_REASON
from projects.models import Activity
from tests.plugins.server import free_port
from tests.plugins.worker import ROOT, worker_env

CSRF = "b" * 32
# Connection refused at once, like a Redis that is not running.
DOWN_BROKER = f"redis://127.0.0.1:{free_port()}/0"


@pytest.fixture
def owner(transactional_db: None):
    return get_user_model().objects.create_user("trainer", password="trainer-pass-123")


@pytest.fixture
def dataset(owner, rows):
    return rows.dataset(owner)


@pytest.fixture
def server(start_app_server):
    """One warmed gunicorn process, so the timings below are the failed publish, not the first
    request's imports (URL conf, DRF, the database connection), which under CI's load took
    seconds of their own."""
    server = start_app_server(CELERY_BROKER_URL=DOWN_BROKER, WEB_WORKERS="1")
    for path in ("/api/", "/accounts/login/"):
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        conn.request("GET", path)
        conn.getresponse().read()
        conn.close()
    return server


def post(server, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes, float]:
    started = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    conn.request("POST", path, body=body, headers=headers)
    response = conn.getresponse()
    content = response.read()
    conn.close()
    return response.status, content, time.monotonic() - started


def assert_failed_unreachable(job: TrainingJob) -> None:
    job.refresh_from_db()
    assert job.status == TrainingJob.Status.FAILED
    assert job.reason == UNREACHABLE_REASON
    assert job.finished_at is not None
    assert job.ml_model.status == MLModel.Status.FAILED


def assert_nothing_left() -> None:
    assert not MLModel.objects.exists()
    assert not TrainingJob.objects.exists()
    assert not Activity.objects.filter(verb="training_started").exists()


def test_the_api_answers_503_and_leaves_no_row_and_a_resume_ends_failed(
        server, owner, dataset, rows) -> None:
    token = token_create(user=owner, name="broker test")[1]
    status, body, seconds = post(
        server, "/api/jobs/",
        json.dumps({"dataset": dataset.pk, "model_type": "tfidf_logreg"}).encode(),
        {"Authorization": f"Token {token}", "Content-Type": "application/json"},
    )
    assert status == 503, body
    assert json.loads(body)["detail"] == UNREACHABLE_REASON
    assert seconds < 3
    assert_nothing_left()

    # Resuming a failed job while the broker is still down says the same and leaves it failed.
    model = rows.model(owner, dataset, project_id=dataset.project_id, status="failed")
    job = rows.job(model, status=TrainingJob.Status.FAILED, reason="earlier failure")
    status, body, seconds = post(server, f"/api/jobs/{job.pk}/resume/", b"",
                                 {"Authorization": f"Token {token}"})
    assert status == 503, body
    assert "nothing was started" in json.loads(body)["detail"]
    assert seconds < 3
    assert_failed_unreachable(job)
    assert job.attempt == 2


def test_the_web_form_answers_503_with_the_reason(server, owner, dataset) -> None:
    client = Client()
    client.force_login(owner)
    form = urllib.parse.urlencode({
        "csrfmiddlewaretoken": CSRF, "dataset": dataset.pk, "model_type": "tfidf_logreg",
        "preset": "balanced",
    }).encode()
    status, body, seconds = post(server, "/models/new/", form, {
        "Cookie": f"sessionid={client.cookies['sessionid'].value}; csrftoken={CSRF}",
        "Content-Type": "application/x-www-form-urlencoded",
    })
    assert status == 503, body[:500]
    assert UNREACHABLE_REASON in body.decode()
    assert seconds < 3
    assert_nothing_left()


def manage(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, capture_output=True, text=True,
        env=worker_env(CELERY_BROKER_URL=DOWN_BROKER), timeout=120,
    )


def test_the_commands_fail_with_one_clear_line(owner, dataset, rows) -> None:
    result = manage("train_model", "--dataset", str(dataset.pk), "--type", "tfidf_logreg")
    assert result.returncode == 1
    assert f"CommandError: {UNREACHABLE_REASON}" in result.stderr
    assert "Traceback" not in result.stderr
    assert_nothing_left()

    model = rows.model(owner, dataset, project_id=dataset.project_id, status="failed")
    job = rows.job(model, status=TrainingJob.Status.FAILED, reason="earlier failure")

    result = manage("resume_training", str(job.pk))
    assert result.returncode == 1
    assert "CommandError: The job queue is unreachable" in result.stderr
    assert f"Job {job.pk} is failed again" in result.stderr
    assert "Traceback" not in result.stderr
    assert_failed_unreachable(job)
