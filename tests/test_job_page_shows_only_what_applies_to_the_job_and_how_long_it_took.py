"""The job page shows what holds for this job only: the live fields (heartbeat age, time left,
phase, "updates every …") only while it runs, the training settings only for a model type that
uses them, and for every job how long it waited, ran and took in all."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone

from classification.models import TrainingJob
from classification.views.presenters import format_duration, job_durations, job_settings

pytestmark = pytest.mark.django_db

LIVE_FIELDS = ('id="job-heartbeat"', 'id="job-eta"', 'id="job-phase"', "updates every")
PRESET = {"epochs": 3, "batch_size": 16, "max_length": 256, "learning_rate": 5e-05,
          "gradient_accumulation_steps": 1, "early_stopping_patience": 2, "preset": "balanced"}


def page_of(client, job: TrainingJob) -> str:
    return client.get(reverse("classification:job_detail", args=[job.pk])).content.decode()


def job_card(page: str) -> str:
    return page[page.index('id="job-card"'):page.index('id="loss-chart"')]


def stamp(job: TrainingJob, **moments: datetime | None) -> TrainingJob:
    """Set the job's timestamps (created_at is auto_now_add, so only an update can move it)."""
    TrainingJob.objects.filter(pk=job.pk).update(**moments)
    job.refresh_from_db()
    return job


def a_job(rows, user, *, model_type: str = "minilm", **fields: Any) -> TrainingJob:
    model = rows.model(user, rows.dataset(user), name=f"A {model_type}", model_type=model_type,
                       status="training")
    fields.setdefault("heartbeat_at", timezone.now())
    return rows.job(model, config=PRESET, **fields)


@pytest.mark.parametrize("status", ["completed", "failed", "stalled", "cancelled"])
def test_an_ended_job_page_renders_no_heartbeat_age_eta_phase_or_update_note(
    alice_client, user, rows, status: str
) -> None:
    job = a_job(rows, user, status=status, phase="training", eta_seconds=30.0)

    card = job_card(page_of(alice_client, job))

    for field in LIVE_FIELDS:
        assert field not in card, field
    assert "s ago" not in card
    assert "Last heartbeat" not in card
    assert "Time left" not in card


def test_a_running_job_page_shows_the_heartbeat_age_time_left_and_the_update_note(
    alice_client, user, rows
) -> None:
    job = a_job(rows, user, status="running", eta_seconds=80.0)
    stamp(job, heartbeat_at=timezone.now() - timedelta(seconds=3))

    card = job_card(page_of(alice_client, job))

    assert re.search(r'id="job-heartbeat">[34] s ago<', card)
    assert 'id="job-eta">~80 s<' in card
    assert "updates every 1.5 s" in card
    assert 'id="job-phase" data-show-when="running">Training<' in card


def test_a_queued_job_page_keeps_the_running_fields_hidden_until_it_runs(
    alice_client, user, rows
) -> None:
    job = a_job(rows, user, status="queued", phase="queued", heartbeat_at=None)

    card = job_card(page_of(alice_client, job))

    # Present for job.js to reveal when the job starts, but hidden while it waits.
    for label in ("Last heartbeat", "Time left"):
        assert f'<div data-show-when="running" hidden><div class="stat-label">{label}' in card
    assert 'data-show-when="queued running">This page updates every 1.5 s' in card


@pytest.mark.parametrize("model_type", ["tfidf_logreg", "tfidf_svm"])
def test_a_tfidf_job_page_shows_no_epochs_batch_size_learning_rate_or_max_length(
    alice_client, user, rows, model_type: str
) -> None:
    job = a_job(rows, user, model_type=model_type, status="completed", total_epochs=1,
                current_epoch=1.0, current_step=1, total_steps=1)

    page = page_of(alice_client, job)

    for word in ("job-epoch", "job-step", "Epoch", "epochs", "batch_size", "learning_rate",
                 "max_length", "gradient_accumulation_steps", "early_stopping_patience",
                 "balanced", "1.00 / 1", "job-loss"):
        assert word not in page, word
    assert f"Nothing to set: {model_type} is fitted in one pass" in page
    assert "data-single-pass" in page


def test_a_transformer_job_page_shows_its_epochs_batch_size_and_learning_rate(
    alice_client, user, rows
) -> None:
    job = a_job(rows, user, model_type="minilm", status="running")

    page = page_of(alice_client, job)

    assert 'id="job-epoch">1.20 / 3<' in page
    assert 'id="job-step">12 / 30<' in page
    for key, value in (("epochs", "3"), ("batch_size", "16"), ("learning_rate", "0.00005"),
                       ("max_length", "256")):
        assert f"<dt>{key}</dt><dd>{value}</dd>" in page


def test_the_embedding_baseline_keeps_max_length_but_drops_the_training_knobs() -> None:
    config = {**PRESET, "label_names": ["a", "b"], "use_mps": True}

    embed = dict(job_settings(model_type="minilm_embed_logreg", config=config))
    tfidf = dict(job_settings(model_type="tfidf_logreg", config=config))
    bert = dict(job_settings(model_type="biobert", config=config))

    assert embed == {"max_length": 256, "preset": "balanced", "use_mps": True}
    assert tfidf == {}
    assert bert == {key: value for key, value in config.items() if key != "label_names"}


def test_a_completed_job_page_says_how_long_it_waited_ran_and_took(alice_client, user,
                                                                   rows) -> None:
    created = timezone.now() - timedelta(hours=1)
    job = stamp(a_job(rows, user, status="completed"), created_at=created,
                started_at=created + timedelta(seconds=7),
                finished_at=created + timedelta(seconds=7 + 245))

    card = job_card(page_of(alice_client, job))

    assert 'id="job-duration-queued">7 s<' in card
    assert 'id="job-duration-ran">4 min 05 s<' in card
    assert 'id="job-duration-total">4 min 12 s<' in card
    assert "data-counting" not in card  # an ended job's durations are final


def test_a_running_job_page_counts_its_run_and_total_so_far(alice_client, user, rows) -> None:
    now = timezone.now()
    job = stamp(a_job(rows, user, status="running"), created_at=now - timedelta(minutes=3),
                started_at=now - timedelta(minutes=2))

    card = job_card(page_of(alice_client, job))

    assert 'id="job-duration-queued">1 min 00 s<' in card
    assert re.search(r'data-duration="ran" data-seconds="12\d\.\d" data-counting>', card)
    assert re.search(r'id="job-duration-ran">2 min 0\d s<', card)
    assert re.search(r'data-duration="total" data-seconds="18\d\.\d" data-counting>', card)


def test_a_queued_job_page_counts_its_wait_and_has_not_run(alice_client, user, rows) -> None:
    job = stamp(a_job(rows, user, status="queued", phase="queued"),
                created_at=timezone.now() - timedelta(seconds=40))

    card = job_card(page_of(alice_client, job))

    assert re.search(r'data-duration="queued" data-seconds="4\d\.\d" data-counting>', card)
    assert 'id="job-duration-ran">not started<' in card


def test_durations_of_a_job_cancelled_in_the_queue_and_of_a_resumed_attempt(rows, user) -> None:
    t0 = timezone.now() - timedelta(days=1)
    cancelled = stamp(a_job(rows, user, status="cancelled", phase="queued"), created_at=t0,
                      started_at=None, finished_at=t0 + timedelta(seconds=90))
    by_key = {row["key"]: row for row in job_durations(cancelled)}
    assert by_key["queued"]["text"] == "1 min 30 s"
    assert by_key["ran"]["text"] == "did not start"
    assert by_key["total"]["text"] == "1 min 30 s"

    # Attempt 2 ran for 10 minutes, started 5 hours after the job was first created.
    resumed = stamp(a_job(rows, user, status="completed", phase="done", attempt=2),
                    created_at=t0, started_at=t0 + timedelta(hours=5),
                    finished_at=t0 + timedelta(hours=5, minutes=10))
    by_key = {row["key"]: row for row in job_durations(resumed)}
    assert by_key["ran"] == {"key": "ran", "label": "Ran · attempt 2", "seconds": 600.0,
                             "counting": False, "text": "10 min 00 s"}
    assert by_key["total"]["text"] == "5 h 10 min"
    assert by_key["queued"]["seconds"] is None  # the wait before attempt 2 is not recorded

    # Re-queued for attempt 3: the old started_at is not this attempt's start.
    requeued = stamp(a_job(rows, user, status="queued", phase="queued", attempt=3),
                     created_at=t0, started_at=t0 + timedelta(hours=5), finished_at=None,
                     updated_at=timezone.now() - timedelta(seconds=20))
    by_key = {row["key"]: row for row in job_durations(requeued)}
    assert 19 <= by_key["queued"]["seconds"] <= 25
    assert by_key["ran"]["text"] == "not started"


def test_durations_read_as_seconds_minutes_or_hours() -> None:
    assert format_duration(None) == "–"
    assert format_duration(0.4) == "0 s"
    assert format_duration(59.5) == "1 min 00 s"
    assert format_duration(61) == "1 min 01 s"
    assert format_duration(3599) == "59 min 59 s"
    assert format_duration(7380) == "2 h 03 min"


def test_a_tfidf_model_page_lists_no_transformer_settings(alice_client, user, rows) -> None:
    model = rows.model(user, rows.dataset(user), model_type="tfidf_logreg",
                       parameters={"epochs": 3, "batch_size": 16, "learning_rate": 2e-5,
                                   "max_length": 256, "max_features": 50000})

    html = alice_client.get(f"/models/{model.pk}/").content.decode()

    details = html[html.index("<h2>Details</h2>"):]
    details = details[: details.index("</dl>")]
    assert "max_features" in details
    for setting in ("epochs", "batch_size", "learning_rate", "max_length"):
        assert setting not in details
