"""A collection (several exports, or files added to one) is stored and queued by the web and
merged and imported by a real worker on the default queue, like a single upload: its progress
counts the records of every file and their bytes, in order, up to all of them; the API's
`POST /api/datasets/collections/` answers 202 with the same import to follow. A cancel while
the worker reads stops it at its next chunk of records and keeps nothing: no dataset, no
stored file, no working file."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from dataset_management.collection import COUNTS_KEY
from dataset_management.models import Dataset, ImportJob
from tests.import_support import import_wait, start_default_worker
from tests.plugins.datasets import ROOT, media_files

pytestmark = pytest.mark.worker

DEDUP = ROOT / "tests" / "fixtures" / "dedup"
FILES = [DEDUP / "pubmed_search.nbib", DEDUP / "embase_search.ris", DEDUP / "scopus_search.csv"]


def post_files(client, url: str, paths: list[Path], **fields: str):
    handles = [path.open("rb") for path in paths]
    try:
        return client.post(url, {"files": handles, **fields})
    finally:
        for handle in handles:
            handle.close()


def follow(client, pk: int) -> list[dict]:
    """The import page's progress JSON, polled until the import ends."""
    url = reverse("datasets:import_progress", args=[pk])
    seen = [client.get(url).json()]
    deadline = time.monotonic() + 120
    while seen[-1]["is_active"] and time.monotonic() < deadline:
        time.sleep(0.05)
        seen.append(client.get(url).json())
    return seen


def test_the_page_queues_a_collection_that_a_worker_merges_with_progress(
    start_worker, media_root, alice_client, tmp_path: Path
) -> None:
    start_default_worker(start_worker)
    answer = post_files(alice_client, reverse("datasets:upload_collection"), FILES,
                        name="Living review", unlabelled="on")
    assert answer.status_code == 302
    pk = int(re.search(r"/datasets/imports/(\d+)/$", answer["Location"]).group(1))
    seen = follow(alice_client, pk)
    done = seen[-1]
    assert done["status"] == "completed", done
    assert done["progress"] == 100.0
    assert done["rows_read"] == 21  # every record of the three files, duplicates included
    assert done["bytes_read"] == done["total_bytes"] == sum(p.stat().st_size for p in FILES)
    rows = [s["rows_read"] for s in seen]
    assert rows == sorted(rows), "progress never goes backwards"
    dataset = Dataset.objects.get(pk=done["dataset_id"])
    assert done["dataset_url"] == reverse("datasets:detail", args=[dataset.pk])
    counts = dataset.report[COUNTS_KEY]
    assert (dataset.row_count, counts["records_identified"], counts["duplicates_removed"]) == (
        15, 21, 6)
    assert not any(path.startswith("imports/") for path in media_files())

    # Add a file to it: another import, a new version; the collection is never rewritten.
    update = tmp_path / "update.ris"
    update.write_text("TY  - JOUR\nTI  - A new trial of aspirin for primary prevention in "
                      "diabetes\nAB  - Aspirin did not lower events.\nPY  - 2024\nER  - \n",
                      encoding="utf-8")
    added = post_files(alice_client, reverse("datasets:add_files", args=[dataset.pk]), [update])
    pk = int(re.search(r"/datasets/imports/(\d+)/$", added["Location"]).group(1))
    done = follow(alice_client, pk)[-1]
    assert done["status"] == "completed", done
    grown = Dataset.objects.get(pk=done["dataset_id"])
    assert (grown.row_count, grown.report[COUNTS_KEY]["records_identified"]) == (16, 22)
    assert Dataset.objects.get(pk=dataset.pk).row_count == 15


def test_the_api_answers_202_and_the_collection_import_names_its_dataset(
    start_worker, media_root, api_token
) -> None:
    start_default_worker(start_worker)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token}")
    refused = post_files(client, "/api/datasets/collections/", FILES[:1], name="")
    assert refused.status_code == 400
    assert refused.json() == {"name": ["Give the collection a name."]}
    answer = post_files(client, "/api/datasets/collections/", FILES, name="Review",
                        unlabelled="true")
    assert answer.status_code == 202, answer.content
    body = answer.json()
    assert body["status"] == "queued"
    assert body["files"] == [p.name for p in FILES]
    assert answer["Location"].endswith(body["url"])
    job = import_wait(body["id"])
    assert job.status == "completed", job.reason
    followed = client.get(body["url"]).json()
    dataset = client.get(followed["dataset_url"] + "?expand=report").json()
    assert (dataset["name"], dataset["row_count"]) == ("Review", 15)
    assert dataset["report"][COUNTS_KEY]["duplicates_removed"] == 6


def write_csv(path: Path, rows: int) -> Path:
    with path.open("w") as out:
        out.write("title,abstract\n")
        for start in range(0, rows, 50_000):
            out.write("".join(f"Title {i},Heart and tumour study {i}\n"
                              for i in range(start, min(rows, start + 50_000))))
    return path


def test_a_cancel_while_the_worker_reads_the_files_keeps_nothing(
    start_worker, media_root, alice_client, tmp_path: Path
) -> None:
    start_default_worker(start_worker)
    large = write_csv(tmp_path / "large.csv", 400_000)
    answer = post_files(alice_client, reverse("datasets:upload_collection"),
                        [FILES[0], large], name="Big", unlabelled="on")
    pk = int(re.search(r"/datasets/imports/(\d+)/$", answer["Location"]).group(1))
    assert {p.rsplit("/", 1)[-1] for p in media_files()} == {FILES[0].name, "large.csv"}
    import_wait(pk, until=lambda j: j.status == "running" and j.rows_read > 100)
    cancel = alice_client.post(reverse("datasets:import_cancel", args=[pk]))
    assert cancel.status_code == 302
    job = import_wait(pk)
    assert (job.status, job.reason) == ("cancelled", "Cancelled by alice; nothing was saved.")
    assert 0 < job.rows_read < 400_000 + 7
    assert not Dataset.objects.exists()
    assert ImportJob.objects.get(pk=pk).input_path == ""
    assert media_files() == set()
