"""A queued training job shows where it stands in the training queue (1 starts next, oldest
first, counting every user's jobs) on the dashboard and on its job page."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.template.loader import render_to_string
from django.test import Client
from django.utils import timezone

from classification.models import TrainingJob
from classification.selectors import training_job_queue_positions

pytestmark = pytest.mark.django_db


def queued(rows, owner, name: str, *, minutes_ago: float) -> TrainingJob:
    job = rows.job(rows.model(owner, rows.dataset(owner), name=name), status="queued",
                   phase="queued", progress_percentage=0.0)
    # The moment it entered the queue (creation, or the resume that re-queued it).
    TrainingJob.objects.filter(pk=job.pk).update(
        updated_at=timezone.now() - timedelta(minutes=minutes_ago)
    )
    return job


def test_positions_count_queued_jobs_oldest_first_and_skip_running_ones(
    rows, user, other_user
) -> None:
    first = queued(rows, other_user, "Bob's", minutes_ago=30)
    second = queued(rows, user, "Alice's early", minutes_ago=20)
    resumed = queued(rows, user, "Alice's resumed", minutes_ago=1)
    TrainingJob.objects.filter(pk=resumed.pk).update(
        created_at=timezone.now() - timedelta(days=3)  # old job, re-queued a minute ago
    )
    rows.job(rows.model(user, rows.dataset(user)), status="running")

    assert training_job_queue_positions() == {first.pk: 1, second.pk: 2, resumed.pk: 3}


def test_the_dashboard_shows_each_queued_job_position(rows, user, other_user,
                                                      alice_client: Client) -> None:
    queued(rows, other_user, "Bob's", minutes_ago=30)
    mine = queued(rows, user, "Alice's", minutes_ago=5)

    page = alice_client.get("/").content.decode()

    assert "#2 of 2 in the training queue" in page
    assert "Bob&#x27;s" not in page
    assert f'href="/jobs/{mine.pk}/"' in page


def test_the_job_page_template_shows_the_position_and_the_jobs_ahead(rows, user) -> None:
    queued(rows, user, "Earlier", minutes_ago=30)
    job = queued(rows, user, "Later", minutes_ago=5)
    positions = training_job_queue_positions()

    html = render_to_string("classification/job_detail.html", {
        "job": job, "model": job.ml_model, "reason_plain": "",
        "queue_position": positions.get(job.pk), "queue_length": len(positions),
    })

    assert "Number 2 of 2 in the training queue, 1 ahead of it." in html
    assert 'data-show-when="queued"' in html
