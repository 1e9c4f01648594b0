"""A batch's history: created queued by its owner, then each status it entered, with the
reason and who asked (the person cancelling, or the system for the worker and the reaper). A
duplicate claim writes no second row, and the batch page shows the history."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from classification.batches import services
from classification.history.selectors import status_changes_for
from classification.models import BatchJob
from projects.services import member_set
from tests.batch_support import DEMO_SLICE, create_batch


@pytest.fixture
def batch(media_root, user, trained_model) -> BatchJob:
    # Inside the test transaction on_commit never fires, so nothing reaches the broker.
    return create_batch(owner=user, ml_model=trained_model, path=DEMO_SLICE)


def _history(batch: BatchJob) -> list[tuple[str, str, Any]]:
    return [(c.source, c.target, c.actor_id) for c in status_changes_for(batch=batch)]


def test_a_batch_that_runs_and_completes_has_three_rows_and_a_duplicate_claim_adds_none(
    batch, user
) -> None:
    assert services.batch_job_claim(batch_id=batch.pk)
    assert not services.batch_job_claim(batch_id=batch.pk)  # the duplicate delivery
    assert services.batch_job_finish(batch_id=batch.pk, target="completed")
    assert not services.batch_job_finish(batch_id=batch.pk, target="failed", reason="late")
    assert _history(batch) == [
        ("", "queued", user.pk), ("queued", "running", None), ("running", "completed", None),
    ]
    assert all(c.job_id is None for c in status_changes_for(batch=batch))


def test_a_failed_batch_keeps_its_reason_in_the_history(batch) -> None:
    services.batch_job_claim(batch_id=batch.pk)
    reason = "The inference worker stopped while classifying (killed) after 3 of 200 articles"
    assert services.batch_job_finish(batch_id=batch.pk, target="failed", reason=reason)
    assert list(status_changes_for(batch=batch))[-1].reason == reason


def test_cancelling_from_the_batch_page_records_who_and_the_page_shows_it(
    batch, user, alice_client
) -> None:
    response = alice_client.post(reverse("classification:batch_cancel", args=[batch.pk.hex]))
    assert response.status_code == 302
    assert _history(batch) == [("", "queued", user.pk), ("queued", "cancelled", user.pk)]
    cancelled = list(status_changes_for(batch=batch))[-1]
    assert cancelled.reason == "Cancelled before the inference worker started it."

    page = alice_client.get(reverse("classification:batch_detail", args=[batch.pk.hex]))
    html = page.content.decode()
    start = html.index('id="status-history"')
    history = html[start:html.index("</table>", start)]
    assert "queued → " in history
    assert cancelled.reason in history
    assert "alice" in history
    assert history.count("<tr data-target=") == 2


def test_a_batch_cancelled_by_another_member_names_that_member(batch, user, other_user) -> None:
    member_set(actor=user, project=batch.project, member=other_user, role="maintainer")
    services.batch_job_cancel(batch=batch, actor=other_user)
    assert _history(batch)[-1] == ("queued", "cancelled", other_user.pk)
