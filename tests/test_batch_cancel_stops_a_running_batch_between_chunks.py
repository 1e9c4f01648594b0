"""Cancel, on the batch page or over the API, stops a running batch on the inference worker
between two chunks: it ends `cancelled`, says how far it got, and keeps no file."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from classification.models import BatchJob
from tests.batch_support import (
    DEMO_SLICE,
    batch_files,
    create_batch,
    start_inference_worker,
    wait_for_batch,
)
from tests.job_support import wait_for

SLOW = {"MEDLITBOT_FAULT_INJECTION": "slow_batch_chunk=1.0", "PROGRESS_WRITE_INTERVAL": "0.1"}


def running_batch(user, trained_model) -> BatchJob:
    batch = create_batch(owner=user, ml_model=trained_model, path=DEMO_SLICE)

    def midway() -> bool:
        batch.refresh_from_db()
        return batch.status == "running" and batch.processed > 0

    wait_for(midway, 60, "the batch to be part-way through", poll=0.05)
    return batch


def assert_cancelled_part_way(batch: BatchJob) -> None:
    batch = wait_for_batch(batch, timeout=15)
    assert batch.status == BatchJob.Status.CANCELLED
    assert 0 < batch.processed < 200
    assert batch.reason == f"Cancelled after {batch.processed} of 200 articles."
    assert batch_files(batch) == set()


@pytest.mark.worker
def test_cancel_on_the_page_and_over_the_api_stops_a_running_batch(
    start_worker, media_root, trained_model, user, alice_client, api_token
) -> None:
    start_inference_worker(start_worker, **SLOW)

    batch = running_batch(user, trained_model)
    page = alice_client.get(reverse("classification:batch_detail", args=[batch.pk.hex]))
    assert 'id="batch-cancel-running"' in page.content.decode()
    response = alice_client.post(reverse("classification:batch_cancel", args=[batch.pk.hex]))
    assert response.status_code == 302
    assert_cancelled_part_way(batch)
    download = alice_client.get(reverse("classification:batch_download", args=[batch.pk.hex]))
    assert download.status_code == 404

    batch = running_batch(user, trained_model)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {api_token}")
    response = api.post(f"/api/batches/{batch.pk.hex}/cancel/")
    assert response.status_code == 202
    assert response.json()["cancel_requested"] is True
    assert_cancelled_part_way(batch)
    assert api.get(f"/api/batches/{batch.pk.hex}/result/").status_code == 409
