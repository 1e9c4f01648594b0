"""The dashboard's Workers card is shared by every user, but what a busy worker runs belongs to a
project: its job (or batch) id and link are shown to that project's members only; anyone else
sees the worker as busy, with no id."""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from classification.models import BatchJob
from core import services

pytestmark = pytest.mark.django_db


def busy_worker(hostname: str, *, job: str, task_id: str, queue: str) -> None:
    now = timezone.now()
    services.worker_heartbeat_beat(
        hostname=hostname, host="box", pid=9, queues=[queue], pool="solo", concurrency=1,
        started_at=now, state="busy", current_task="classification.tasks.x",
        current_task_id=task_id, current_job=job, busy_since=now,
    )


def workers_card(client) -> str:
    page = client.get("/").content.decode()
    return page[page.index('id="workers"'):page.index("Recent models")]


def test_a_training_job_id_is_shown_to_its_project_and_hidden_from_another(
    alice_client, bob_client, user, rows
) -> None:
    job = rows.job(rows.model(user, rows.dataset(user), name="Alice's model"),
                   celery_task_id="task-alice")
    busy_worker("training@box", job=f"training job {job.pk}", task_id="task-alice",
                queue=settings.QUEUE_TRAINING)

    alice, bob = workers_card(alice_client), workers_card(bob_client)

    link = reverse("classification:job_detail", args=[job.pk])
    assert f'<a href="{link}">training job {job.pk}</a>' in alice
    assert '<span class="badge running">busy</span>' in bob
    assert f"job {job.pk}" not in bob
    assert link not in bob
    assert not re.search(r"training job \d", bob)


def test_a_batch_is_named_to_its_project_only_and_a_borrowed_job_id_lends_no_link(
    alice_client, bob_client, user, other_user, rows
) -> None:
    model = rows.model(user, rows.dataset(user), name="Alice's model")
    batch = BatchJob.objects.create(project=model.project, owner=user, ml_model=model,
                                    filename="a.csv", celery_task_id="task-batch")
    busy_worker("inference@box", job=f"batch {batch.pk.hex[:8]}", task_id="task-batch",
                queue=settings.QUEUE_INFERENCE)
    # Bob's own job's task id beside Alice's job id: the id in the description decides.
    bobs = rows.job(rows.model(other_user, rows.dataset(other_user), name="Bob's model"),
                    celery_task_id="task-bob")
    alices = rows.job(model)
    busy_worker("training@box", job=f"training job {alices.pk}", task_id="task-bob",
                queue=settings.QUEUE_TRAINING)

    alice, bob = workers_card(alice_client), workers_card(bob_client)

    assert f"batch {batch.pk.hex[:8]}" in alice
    assert reverse("classification:batch_detail", args=[batch.pk.hex]) in alice
    assert batch.pk.hex[:8] not in bob
    assert f"training job {alices.pk}" not in bob
    assert reverse("classification:job_detail", args=[bobs.pk]) not in bob
    assert bob.count('<span class="badge running">busy</span>') == 2
