"""Batch classification pages: upload a file, watch it, download a CSV that no spreadsheet will
execute; every batch URL is private to its owner.

The task's message is never sent here (these tests run inside a transaction that never commits),
so each test runs the batch with the service the inference worker calls; the real worker is in
tests/test_batch_*.py.
"""

from __future__ import annotations

import csv
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from classification.batches.services import batch_job_run, batch_jobs_reap
from classification.models import BatchJob

pytestmark = pytest.mark.django_db
DEMO = Path(__file__).resolve().parent / "fixtures" / "demo_slice.csv"
HOSTILE = (
    b"pmid;title;abstract\n"
    b"1;=HYPERLINK(\"http://evil\",\"click\");Heart failure after myocardial infarction\n"
    b"2;+cmd|' /C calc'!A0;Seizures and epilepsy in children\n"
    b"3;@SUM(1+1);-2+3 liver cirrhosis outcomes\n"
    b"4;;\n"
    b"5;Glioma survival;Brain tumour resection outcomes\n"
)


@pytest.fixture(autouse=True)
def own_media(settings, tmp_path) -> None:
    settings.MEDIA_ROOT = tmp_path / "media"


def start(client, model, content: bytes = HOSTILE, name: str = "articles.csv") -> str:
    response = client.post(reverse("classification:batch_create"), {
        "model": model.pk, "file": SimpleUploadedFile(name, content, content_type="text/csv"),
    })
    assert response.status_code == 302, response.content
    match = re.search(r"/classify/batches/([0-9a-f]{32})/$", response["Location"])
    assert match, response["Location"]
    return match.group(1)


def wait_done(client, batch_id: str) -> dict:
    url = reverse("classification:batch_progress", args=[batch_id])
    assert client.get(url).json()["status"] == "queued"
    batch_job_run(batch_id=batch_id)  # what the inference worker runs for the task
    return client.get(url).json()


def download(client, batch_id: str) -> list[list[str]]:
    response = client.get(reverse("classification:batch_download", args=[batch_id]))
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv"
    assert "attachment" in response["Content-Disposition"]
    text = b"".join(response.streaming_content).decode("utf-8-sig")
    return list(csv.reader(io.StringIO(text)))


def test_a_file_is_classified_in_the_background_with_progress(alice_client, trained_model):
    batch_id = start(alice_client, trained_model, DEMO.read_bytes(), "demo_slice.csv")
    page = alice_client.get(reverse("classification:batch_detail", args=[batch_id]))
    assert page.status_code == 200
    assert "Classifying demo_slice.csv" in page.content.decode()

    done = wait_done(alice_client, batch_id)
    assert done["status"] == "completed", done
    assert done["progress"] == 100.0
    assert done["processed"] == done["total"] == 200
    rows = download(alice_client, batch_id)
    labels = trained_model.label_names
    assert rows[0] == ["row", "title", "abstract", "predicted_labels",
                       *[f"p_{n}" for n in labels], "note", "group"]  # the source column
    assert len(rows) == 201
    first = dict(zip(rows[0], rows[1], strict=True))
    assert 0.0 <= float(first[f"p_{labels[0]}"]) <= 1.0

    listing = alice_client.get(reverse("classification:classify")).content.decode()
    assert 'id="batch-table"' in listing
    assert "demo_slice.csv" in listing


def test_every_cell_of_the_csv_is_safe_against_formula_injection(alice_client, trained_model):
    batch_id = start(alice_client, trained_model)
    assert wait_done(alice_client, batch_id)["status"] == "completed"
    rows = download(alice_client, batch_id)
    assert rows[0][:3] == ["row", "id", "title"]
    for row in rows:
        for cell in row:
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), row
    by_id = {r[1]: dict(zip(rows[0], r, strict=True)) for r in rows[1:]}
    assert by_id["1"]["title"] == "'=HYPERLINK(\"http://evil\",\"click\")"
    assert by_id["2"]["title"].startswith("'+cmd")
    assert by_id["3"]["abstract"] == "'-2+3 liver cirrhosis outcomes"
    assert by_id["4"]["note"] == "skipped: no text"
    assert by_id["4"]["predicted_labels"] == ""
    assert by_id["5"]["predicted_labels"] or by_id["5"]["note"] == ""


def test_a_file_without_text_columns_fails_with_a_reason(alice_client, trained_model):
    batch_id = start(alice_client, trained_model, b"foo;bar\n1;2\n", "odd.csv")
    done = wait_done(alice_client, batch_id)
    assert done["status"] == "failed"
    assert "No abstract or text column" in done["reason"]
    missing = alice_client.get(reverse("classification:batch_download", args=[batch_id]))
    assert missing.status_code == 404


def test_batches_are_private_to_their_owner(alice_client, bob_client, trained_model):
    batch_id = start(alice_client, trained_model)
    wait_done(alice_client, batch_id)
    for name in ("batch_detail", "batch_progress", "batch_download"):
        response = bob_client.get(reverse(f"classification:{name}", args=[batch_id]))
        assert response.status_code == 404, name
    assert "articles.csv" not in bob_client.get(reverse("classification:classify")).content.decode()
    # Bob cannot start a batch with Alice's model either.
    response = bob_client.post(reverse("classification:batch_create"), {
        "model": trained_model.pk, "file": SimpleUploadedFile("x.csv", HOSTILE),
    })
    assert response.status_code == 404


def test_batch_upload_needs_csrf_and_a_login(client, user, trained_model):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    strict.force_login(user)
    response = strict.post(reverse("classification:batch_create"), {
        "model": trained_model.pk, "file": SimpleUploadedFile("x.csv", HOSTILE),
    })
    assert response.status_code == 403
    anonymous = client.get(reverse("classification:batch_progress", args=["0" * 32]))
    assert anonymous.status_code == 401


def test_batch_upload_over_the_limit_is_refused(alice_client, trained_model, settings):
    settings.MAX_UPLOAD_SIZE = 100
    response = alice_client.post(reverse("classification:batch_create"), {
        "model": trained_model.pk, "file": SimpleUploadedFile("big.csv", HOSTILE * 5),
    }, follow=True)
    # Refused while it streams (413) or by the batch service (a message on the page).
    assert "the limit" in response.content.decode()
    assert not BatchJob.objects.exists()
    batches = Path(settings.MEDIA_ROOT) / "batches"
    assert not batches.exists() or not any(p.is_file() for p in batches.rglob("*"))


def test_a_batch_whose_worker_died_is_queued_again_with_a_reason(alice_client, trained_model):
    batch_id = start(alice_client, trained_model)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    from core.processes import hostname

    BatchJob.objects.filter(pk=batch_id).update(
        status="running", worker_host=hostname(), worker_pid=gone.pid, total=5, processed=2,
    )
    assert batch_jobs_reap(stale_seconds=600) == [batch_id]
    data = alice_client.get(reverse("classification:batch_progress", args=[batch_id])).json()
    assert data["status"] == "queued"
    assert data["is_active"] is True
    assert data["reason"] == (
        "The inference worker stopped while classifying (killed or restarted) after 2 of 5 "
        "articles; it starts again from the first article (no chunk was complete)."
    )
