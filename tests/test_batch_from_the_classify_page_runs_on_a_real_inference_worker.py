"""A file uploaded on the Classify page is classified by a real inference worker: the page shows
its progress while it runs, and the CSV has one row per input article, in file order."""

from __future__ import annotations

import re
import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from classification.models import BatchJob
from core.processes import hostname
from dataset_management.export import csv_safe_cell
from tests.batch_support import (
    DEMO_SLICE,
    batch_files,
    csv_rows,
    input_rows,
    start_inference_worker,
)


@pytest.mark.worker
def test_a_file_from_the_classify_page_is_classified_by_the_inference_worker_with_live_progress(
    start_worker, media_root, trained_model, alice_client
) -> None:
    # Slow chunks (test-only fault) leave time to watch the progress move.
    worker = start_inference_worker(start_worker, MEDLITBOT_FAULT_INJECTION="slow_batch_chunk=0.5",
                                    PROGRESS_WRITE_INTERVAL="0.1")
    response = alice_client.post(reverse("classification:batch_create"), {
        "model": trained_model.pk,
        "file": SimpleUploadedFile("demo_slice.csv", DEMO_SLICE.read_bytes(), "text/csv"),
    })
    assert response.status_code == 302, response.content
    batch_id = re.search(r"/classify/batches/([0-9a-f]{32})/$", response["Location"]).group(1)
    page = alice_client.get(response["Location"]).content.decode()
    assert "Classifying demo_slice.csv" in page

    url = reverse("classification:batch_progress", args=[batch_id])
    seen: list[dict] = []
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        seen.append(alice_client.get(url).json())
        if not seen[-1]["is_active"]:
            break
        time.sleep(0.05)
    done = seen[-1]
    assert done["status"] == "completed", done
    assert done["progress"] == 100.0
    assert done["processed"] == done["total"] == 200
    midway = [s for s in seen if s["status"] == "running" and 0 < s["processed"] < 200]
    assert midway, [(s["status"], s["processed"]) for s in seen]
    assert 0 < midway[0]["progress"] < 100
    assert midway[0]["phase_display"] == f"{midway[0]['processed']} of 200 articles"
    processed = [s["processed"] for s in seen]
    assert processed == sorted(processed), "progress never goes backwards"

    batch = BatchJob.objects.get(pk=batch_id)
    assert (batch.worker_host, batch.worker_pid) == (hostname(), worker.pid)
    assert batch_files(batch) == {"result.csv", "result.jsonl"}, \
        "the upload is not kept once classified"

    download = alice_client.get(reverse("classification:batch_download", args=[batch_id]))
    assert download["Content-Type"] == "text/csv"
    rows = csv_rows(b"".join(download.streaming_content))
    expected = input_rows(DEMO_SLICE)
    assert [r["row"] for r in rows] == [str(i) for i in range(1, 201)]
    assert [(r["title"], r["abstract"]) for r in rows] == [
        (csv_safe_cell(e["title"].strip()), csv_safe_cell(e["abstract"].strip())) for e in expected
    ]
    labels = set(trained_model.label_names)
    for row in rows:
        assert set(filter(None, row["predicted_labels"].split("|"))) <= labels
        assert all(0.0 <= float(row[f"p_{name}"]) <= 1.0 for name in labels)

    listing = alice_client.get(reverse("classification:classify")).content.decode()
    assert f"/classify/batches/{batch_id}/" in listing
