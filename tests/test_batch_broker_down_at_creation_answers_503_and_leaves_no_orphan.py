"""With the broker unreachable, starting a batch answers 503 with the reason on the page and the
API, and leaves no orphan: the row is failed with that reason and its input file is gone."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.test import APIClient

from classification.models import BatchJob
from core.queueing import UNREACHABLE_REASON
from tests.batch_support import DEMO_SLICE

pytestmark = pytest.mark.django_db(transaction=True)  # the task is sent when a commit happens


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def broker_down() -> Iterator[None]:
    """This process's Celery app publishes to a port nobody listens on, through fresh pools."""
    from medlitbot_project.celery import app

    saved = (app.conf.broker_url, app._pool, app.amqp._producer_pool)
    app.conf.broker_url = f"redis://127.0.0.1:{closed_port()}/0"
    app._pool = app.amqp._producer_pool = None
    yield
    app.conf.broker_url, app._pool, app.amqp._producer_pool = saved


def assert_no_orphan(media_root: Path) -> None:
    batch = BatchJob.objects.get()
    assert batch.status == BatchJob.Status.FAILED
    assert batch.reason == UNREACHABLE_REASON
    assert batch.finished_at is not None
    assert not [p for p in (media_root / "batches").rglob("*") if p.is_file()]


def test_the_classify_page_answers_503_and_the_failed_batch_keeps_no_file(
    broker_down, media_root, trained_model, alice_client
) -> None:
    response = alice_client.post(reverse("classification:batch_create"), {
        "model": trained_model.pk,
        "file": SimpleUploadedFile("demo_slice.csv", DEMO_SLICE.read_bytes(), "text/csv"),
    })
    assert response.status_code == 503
    assert UNREACHABLE_REASON in response.content.decode()
    assert response["Retry-After"]
    assert_no_orphan(media_root)
    listing = alice_client.get(reverse("classification:classify")).content.decode()
    assert 'class="badge failed"' in listing


def test_the_api_answers_503_for_a_file_and_for_a_large_predict(
    broker_down, media_root, trained_model, api_token
) -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token}")
    with DEMO_SLICE.open("rb") as handle:
        response = client.post(f"/api/models/{trained_model.pk}/batches/", {"file": handle},
                               format="multipart")
    assert response.status_code == 503
    assert response.json() == {"detail": UNREACHABLE_REASON}
    assert_no_orphan(media_root)

    BatchJob.objects.all().delete()
    texts = [f"Heart failure outcomes, cohort {i}" for i in range(100)]
    response = client.post(f"/api/models/{trained_model.pk}/predict/", {"texts": texts},
                           format="json")
    assert response.status_code == 503
    assert response.json() == {"detail": UNREACHABLE_REASON}
    assert_no_orphan(media_root)
