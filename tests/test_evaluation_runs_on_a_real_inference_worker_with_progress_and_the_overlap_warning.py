"""Evaluate, from the page and from the API, is a job on a real inference worker: the request
answers at once (a redirect, a 202), the job's progress moves row by row, and the scores come
back with the overlap warning; a file whose labels the model does not know ends `failed` with
that reason, and a cancel stops it between two chunks."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.test import APIClient

from classification import ml_models
from classification.jobs.training import load_split
from classification.models import EvaluationJob, MLModel
from core.processes import hostname
from dataset_management.selectors import dataset_rows_iter
from tests.batch_support import start_inference_worker
from tests.evaluation_support import started_job
from tests.job_support import FIXTURES

SLICE = FIXTURES / "demo_slice.csv"
# Test-only faults: 20 rows a chunk and a pause after each, so the progress can be watched.
SLOW = {"MEDLITBOT_FAULT_INJECTION": "evaluation_chunk_rows=20,slow_evaluation_chunk=0.3",
        "PROGRESS_WRITE_INTERVAL": "0.05"}


@pytest.fixture
def trained(slice_dataset: Any, tmp_path: Path) -> MLModel:
    clf = ml_models.create_classifier("tfidf_logreg")
    config = ml_models.TrainConfig(label_names=slice_dataset.label_names,
                                   multi_label=slice_dataset.is_multilabel)
    clf.fit(load_split(slice_dataset, "train"), load_split(slice_dataset, "validation"), config,
            lambda _: None, lambda: False)
    clf.save(str(tmp_path / "model"))
    return MLModel.objects.create(
        name="T", model_type="tfidf_logreg", dataset=slice_dataset, status="trained",
        artifact_path=str(tmp_path / "model"), label_names=clf.label_names,
    )


def seen_rows(dataset: Any) -> int:
    return sum(row["split"] in ("train", "validation")
               for row in dataset_rows_iter(dataset=dataset, with_record=False))


def follow(get: Any, timeout: float = 90) -> list[dict]:
    """Poll until the job is no longer active; every answer seen."""
    seen: list[dict] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        seen.append(get())
        if not seen[-1]["is_active"]:
            return seen
        time.sleep(0.05)
    raise AssertionError(f"still active after {timeout} s: {seen[-1]}")


@pytest.mark.worker
def test_the_page_answers_at_once_shows_progress_then_the_scores_and_the_overlap_warning(
    start_worker, media_root, trained, slice_dataset, alice_client
) -> None:
    worker = start_inference_worker(start_worker, **SLOW)
    upload = SimpleUploadedFile("slice.csv", SLICE.read_bytes(), content_type="text/csv")
    began = time.monotonic()
    response = alice_client.post(reverse("classification:model_evaluate", args=[trained.pk]),
                                 {"file": upload})
    answered = time.monotonic() - began
    job = started_job(response)
    assert answered < 1.0, f"the evaluate request took {answered:.2f} s"
    page = alice_client.get(response["Location"]).content.decode()
    assert "Evaluation on slice.csv" in page
    assert 'id="evaluation-status"' in page
    assert "js/evaluation.js" in page

    url = reverse("classification:evaluation_progress", args=[job.pk.hex])
    seen = follow(lambda: alice_client.get(url).json())
    done = seen[-1]
    assert done["status"] == "completed", done
    assert done["progress"] == 100.0
    assert done["processed"] == done["total"] == 200
    midway = [s for s in seen if s["status"] == "running" and s["total"]
              and 0 < s["processed"] < 200]
    assert midway, [(s["status"], s["processed"]) for s in seen]
    assert 0 < midway[0]["progress"] < 100
    assert midway[0]["phase_display"] == f"scoring rows: {midway[0]['processed']} of 200 rows"
    processed = [s["processed"] for s in seen if s["status"] == "running"]
    assert processed == sorted(processed), "progress never goes backwards"

    job.refresh_from_db()
    assert (job.worker_host, job.worker_pid) == (hostname(), worker.pid)
    seen_in_training = seen_rows(slice_dataset)
    assert job.result["training_overlap"]["rows"] == seen_in_training > 0
    page = alice_client.get(response["Location"]).content.decode()
    assert 'id="evaluation"' in page
    assert "Micro-F1" in page
    assert f'id="training-overlap" data-rows="{seen_in_training}"' in page
    assert (f"{seen_in_training} of 200 rows of this file are in the model&#x27;s training "
            "data") in page
    listing = alice_client.get(reverse("classification:model_evaluate", args=[trained.pk]))
    assert f"/evaluations/{job.pk.hex}/" in listing.content.decode()


def api_post(client: APIClient, model: MLModel, name: str, content: bytes,
             **columns: str) -> Any:
    upload = SimpleUploadedFile(name, content, content_type="text/csv")
    return client.post(reverse("api:model_evaluations", args=[model.pk]),
                       {"file": upload, **columns}, format="multipart")


@pytest.mark.worker
def test_the_api_answers_202_and_the_job_ends_completed_failed_with_the_reason_or_cancelled(
    start_worker, media_root, trained, user, tmp_path
) -> None:
    start_inference_worker(start_worker, **SLOW)
    client = APIClient()
    client.force_authenticate(user)

    response = api_post(client, trained, "slice.csv", SLICE.read_bytes())
    assert response.status_code == 202, response.content
    assert response["Location"].endswith(response.json()["url"])
    done = follow(lambda: client.get(response.json()["url"]).json())[-1]
    assert done["status"] == "completed", done
    assert done["result"]["n"] == 200
    assert 0 < done["result"]["micro_f1"] <= 1
    assert done["result"]["training_overlap"]["rows"] > 0
    assert "rows of this file are in the model's training data" in done["overlap_warning"]

    lines = SLICE.read_text(encoding="utf-8-sig").splitlines()
    header = lines[0].split(";")
    group = header.index("group")
    unknown = "\n".join([lines[0]] + [";".join(
        "dermatology" if i == group else cell for i, cell in enumerate(line.split(";")))
        for line in lines[1:11]]) + "\n"
    assert unknown.count("dermatology") == 10, "the fixture's rows keep their columns"
    response = api_post(client, trained, "unknown.csv", unknown.encode())
    assert response.status_code == 202, response.content
    failed = follow(lambda: client.get(response.json()["url"]).json())[-1]
    assert failed["status"] == "failed"
    assert failed["reason"].startswith("Could not evaluate on unknown.csv: None of the file's "
                                       "labels (dermatology) is one the model knows")
    assert failed["result"] is None

    response = api_post(client, trained, "slice.csv", SLICE.read_bytes())
    url = response.json()["url"]
    follow_until = time.monotonic() + 60
    while client.get(url).json()["processed"] < 20 and time.monotonic() < follow_until:
        time.sleep(0.05)
    cancelled = client.post(reverse("api:evaluation_cancel", args=[response.json()["id"]]))
    assert cancelled.status_code == 202
    end = follow(lambda: client.get(url).json())[-1]
    assert end["status"] == "cancelled", end
    assert end["reason"].startswith("Cancelled after ")
    assert end["reason"].endswith(" of 200 rows.")

    listed = client.get(reverse("api:model_evaluations", args=[trained.pk])).json()["results"]
    assert [e["status"] for e in listed] == ["cancelled", "failed", "completed"]  # newest first
    assert EvaluationJob.objects.filter(ml_model=trained).count() == 3


@pytest.mark.django_db
def test_the_api_refuses_at_once_a_file_whose_columns_cannot_be_found(
    media_root, trained, user
) -> None:
    client = APIClient()
    client.force_authenticate(user)
    response = api_post(client, trained, "nolabels.csv", b"title;abstract\nHeart;Failure\n")
    assert response.status_code == 400
    assert "no label column" in response.json()["detail"]
    assert "label_column" in response.json()["detail"]
    response = api_post(client, trained, "nolabels.csv", b"title;abstract\nHeart;Failure\n",
                        label_column="nope")
    assert response.status_code == 400
    assert "Column 'nope' not found" in response.json()["detail"]
    assert EvaluationJob.objects.count() == 0
    assert not (Path(media_root) / "evaluations").exists() or not any(
        (Path(media_root) / "evaluations").rglob("input*"))
