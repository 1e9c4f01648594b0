"""An upload is stored and queued by the web, read by a real worker on the default queue, and
becomes the dataset the in-process import would have made: from the upload pages (an import page
that polls its progress, then links the dataset) and from the API (202, then the import to
follow until it names its dataset)."""

from __future__ import annotations

import re
import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.test import APIClient

from dataset_management.models import Dataset, ImportJob
from tests.import_support import import_wait, start_default_worker
from tests.plugins.datasets import DEMO_CSV, media_files

pytestmark = pytest.mark.worker


def test_the_upload_pages_queue_an_import_that_a_worker_turns_into_the_dataset(
    start_worker, media_root, alice_client
) -> None:
    start_default_worker(start_worker)
    step1 = alice_client.post(reverse("datasets:upload"), {
        "file": SimpleUploadedFile("demo.csv", DEMO_CSV.read_bytes(), "text/csv"),
        "name": "Demo", "split_ratios": "0.8,0.1,0.1", "seed": 42,
    })
    assert step1.status_code == 200
    confirm = alice_client.post(reverse("datasets:upload_confirm"), {
        "token": step1.context["staging"].token, "name": "Demo", "split_ratios": "0.8,0.1,0.1",
        "seed": "42", "action": "create",
    })
    assert confirm.status_code == 302
    pk = int(re.search(r"/datasets/imports/(\d+)/$", confirm["Location"]).group(1))
    page = alice_client.get(confirm["Location"]).content.decode()
    assert "Importing “Demo”" in page
    assert 'id="import-status"' in page

    progress_url = reverse("datasets:import_progress", args=[pk])
    seen = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        seen.append(alice_client.get(progress_url).json())
        if not seen[-1]["is_active"]:
            break
        time.sleep(0.05)
    done = seen[-1]
    assert done["status"] == "completed", done
    assert done["progress"] == 100.0
    assert done["rows_read"] == 2855
    assert done["bytes_read"] == done["total_bytes"] == DEMO_CSV.stat().st_size
    dataset = Dataset.objects.get(pk=done["dataset_id"])
    assert done["dataset_url"] == reverse("datasets:detail", args=[dataset.pk])
    assert (dataset.name, dataset.row_count, dataset.owner.username) == ("Demo", 2855, "alice")
    assert dataset.split_sizes == {"train": 2283, "validation": 286, "test": 286}
    rows_read = [s["rows_read"] for s in seen]
    assert rows_read == sorted(rows_read), "progress never goes backwards"
    assert "Open the dataset" in alice_client.get(reverse("datasets:import_detail",
                                                          args=[pk])).content.decode()
    # The upload is not kept twice: the staged copy and the import's input are gone.
    assert not any(path.startswith(("staging/", "imports/")) for path in media_files())


def test_the_api_answers_202_with_the_import_and_the_import_names_its_dataset(
    start_worker, media_root, api_token
) -> None:
    start_default_worker(start_worker)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token}")
    with DEMO_CSV.open("rb") as handle:
        answer = client.post("/api/datasets/", {"file": handle, "name": "Demo", "seed": 7},
                             format="multipart")
    assert answer.status_code == 202, answer.content
    body = answer.json()
    assert body["status"] == "queued"
    assert body["url"] == f"/api/datasets/imports/{body['id']}/"
    assert answer["Location"].endswith(body["url"])
    job = import_wait(body["id"])
    assert job.status == "completed", job.reason
    followed = client.get(body["url"]).json()
    assert followed["status"] == "completed"
    assert followed["progress"] == 100.0
    assert followed["dataset_url"] == f"/api/datasets/{followed['dataset']}/"
    dataset = client.get(followed["dataset_url"]).json()
    assert (dataset["name"], dataset["row_count"], dataset["split_seed"]) == ("Demo", 2855, 7)
    assert ImportJob.objects.get(pk=body["id"]).input_path == ""
