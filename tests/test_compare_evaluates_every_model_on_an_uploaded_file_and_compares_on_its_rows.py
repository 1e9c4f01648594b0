"""From Compare, one upload evaluates every selected model on the file (one evaluation job each,
on the inference worker); the page waits while they run, then compares the models on the file's
rows with intervals. The file is then offered as rows to compare on, and the API compares on it
by its sha256 or by the evaluations' ids. A file a model cannot be evaluated on starts nothing."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from classification import services
from classification.models import EvaluationJob
from projects import services as project_services
from tests.compare_support import compare_api, compare_page, trained_on

FIXTURES = Path(__file__).parent / "fixtures"
SLICE = FIXTURES / "demo_slice.csv"


@pytest.fixture
def two_models(transactional_db: None, import_file: Any, user: Any, settings: Any,
               tmp_path: Path) -> list[Any]:
    settings.MODEL_ARTIFACT_ROOT = tmp_path / "artifacts"
    dataset = import_file(SLICE, name="Slice")
    return [trained_on(dataset, user=user, model_type=kind)
            for kind in ("tfidf_logreg", "tfidf_svm")]


def upload(user: Any, models: list[Any], name: str, content: bytes,
           client: Client | None = None) -> Any:
    if client is None:
        client = Client()
        client.force_login(user)
    return client.post(reverse("classification:model_compare"), {
        "ids": [m.pk for m in models],
        "file": SimpleUploadedFile(name, content, content_type="text/csv")})


def test_one_upload_evaluates_both_and_the_page_compares_on_the_files_rows(
        two_models: list[Any], user: Any) -> None:
    response = upload(user, two_models, "external.csv", SLICE.read_bytes())
    assert response.status_code == 302
    on = re.search(r"on=(evaluation:[0-9a-f,]+)", response["Location"]).group(1)
    jobs = list(EvaluationJob.objects.filter(ml_model__in=two_models))
    assert sorted(job.ml_model_id for job in jobs) == sorted(m.pk for m in two_models)
    assert {job.pk.hex for job in jobs} == set(on.split(":")[1].split(","))

    waiting = compare_page(user, two_models, on=on)
    assert 'id="evaluations-pending"' in waiting
    assert 'id="interval-table"' not in waiting

    for job in jobs:  # the code the inference worker runs
        services.evaluation_job_run(job_id=job.pk.hex)
        job.refresh_from_db()
        assert job.status == "completed", job.reason
    html = compare_page(user, two_models, on=on)
    assert 'id="evaluations-pending"' not in html
    assert 'id="interval-table"' in html
    assert "rows of “external.csv”" in html
    digest = hashlib.sha256(SLICE.read_bytes()).hexdigest()
    assert f'value="evaluation:{digest}"' in html  # offered as rows to compare on from now on

    by_ids = compare_api(user, ",".join(str(m.pk) for m in two_models), on=on)
    assert by_ids.status_code == 200, by_ids.content
    by_file = compare_api(user, ",".join(str(m.pk) for m in two_models),
                          on=f"evaluation:{digest}").json()
    assert by_file["models"] == by_ids.json()["models"]
    results = {job.ml_model_id: job.result for job in jobs}
    assert by_file["rows"] == results[two_models[0].pk]["rows_scored"]
    for compared in by_file["models"]:
        cell = compared["metrics"]["micro_f1"]
        assert cell["value"] == pytest.approx(results[compared["id"]]["micro_f1"], abs=1e-9)
        assert cell["low"] <= cell["value"] <= cell["high"]


def test_a_file_without_a_label_column_starts_no_evaluation(
        two_models: list[Any], user: Any) -> None:
    client = Client()
    client.force_login(user)
    response = upload(user, two_models, "unlabelled.csv",
                      b"title;abstract\nA trial;Of statins in the elderly\n", client)
    assert response.status_code == 302
    assert "on=test" in response["Location"]
    assert not EvaluationJob.objects.exists()
    html = client.get(response["Location"]).content.decode()
    assert "Could not evaluate these models on “unlabelled.csv”" in html


def test_evaluations_of_another_file_are_not_compared_as_one(
        two_models: list[Any], user: Any) -> None:
    first = upload(user, two_models, "a.csv", SLICE.read_bytes())
    assert first.status_code == 302
    for job in EvaluationJob.objects.all():
        services.evaluation_job_run(job_id=job.pk.hex)
    second = upload(user, two_models, "b.csv", SLICE.read_bytes() + b"\n")
    assert second.status_code == 302
    for job in EvaluationJob.objects.filter(filename="b.csv"):
        services.evaluation_job_run(job_id=job.pk.hex)
    a = EvaluationJob.objects.get(filename="a.csv", ml_model=two_models[0])
    b = EvaluationJob.objects.get(filename="b.csv", ml_model=two_models[1])
    mixed = compare_api(user, ",".join(str(m.pk) for m in two_models),
                        on=f"evaluation:{a.pk.hex},{b.pk.hex}")
    assert mixed.status_code == 400
    assert "different files" in str(mixed.json()["on"])


def test_a_viewer_may_compare_but_is_not_offered_the_upload_and_a_forged_one_is_refused(
        two_models: list[Any], user: Any, other_user: Any) -> None:
    project_services.member_add(user=user, project=two_models[0].project, identifier="bob",
                                role="viewer")
    html = compare_page(other_user, two_models)
    assert 'id="interval-table"' in html
    assert 'id="compare-evaluate-form"' not in html  # not drawn; a forged POST is refused
    assert 'id="compare-evaluate-form"' in compare_page(user, two_models)
    refused = upload(other_user, two_models, "external.csv", SLICE.read_bytes())
    assert refused.status_code == 403
    assert not EvaluationJob.objects.exists()
