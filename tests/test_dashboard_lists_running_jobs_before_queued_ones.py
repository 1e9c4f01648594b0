"""The dashboard's job list puts what runs now above what waits: running jobs first (newest
first), then queued ones in the order the training queue will start them."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from classification.models import TrainingJob

pytestmark = pytest.mark.django_db


def a_job(rows, user, name: str, status: str, *, minutes_ago: float) -> TrainingJob:
    model = rows.model(user, rows.dataset(user), name=name, status="training")
    job = rows.job(model, status=status, phase="queued" if status == "queued" else "training")
    moment = timezone.now() - timedelta(minutes=minutes_ago)
    # created_at and updated_at are set by Django on save; only an update can move them.
    TrainingJob.objects.filter(pk=job.pk).update(created_at=moment, updated_at=moment)
    return job


def order_on_the_dashboard(client, names: list[str]) -> list[str]:
    page = client.get("/").content.decode()
    start = page.index('id="active-jobs"')
    table = page[start:page.index("</table>", start)]
    return sorted(names, key=table.index)


def test_a_running_job_is_listed_above_a_queued_job_created_after_it(alice_client, user,
                                                                     rows) -> None:
    a_job(rows, user, "Running BERT", "running", minutes_ago=30)
    a_job(rows, user, "Queued later", "queued", minutes_ago=1)

    assert order_on_the_dashboard(alice_client, ["Running BERT", "Queued later"]) == [
        "Running BERT", "Queued later"]


def test_running_jobs_come_newest_first_then_queued_ones_next_to_start_first(
    alice_client, user, rows
) -> None:
    a_job(rows, user, "Queued second", "queued", minutes_ago=5)
    a_job(rows, user, "Running old", "running", minutes_ago=60)
    a_job(rows, user, "Queued first", "queued", minutes_ago=20)
    a_job(rows, user, "Running new", "running", minutes_ago=10)
    a_job(rows, user, "Finished", "completed", minutes_ago=0)

    names = ["Queued second", "Running old", "Queued first", "Running new"]
    assert order_on_the_dashboard(alice_client, names) == [
        "Running new", "Running old", "Queued first", "Queued second"]
    page = alice_client.get("/").content.decode()
    first = page.index("Queued first")
    assert "#1 of 2 in the training queue" in page[first:page.index("Queued second")]
    # The ended job is under "Recently finished", not among the running ones.
    assert page.index("Recently finished") < page.index("Finished</a>")
