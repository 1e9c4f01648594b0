"""Pages that use a real trained model: classify, evaluate on a file, download as zip."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from tests.evaluation_support import run_here

pytestmark = pytest.mark.django_db
DEMO = Path(__file__).resolve().parent / "fixtures" / "demo_slice.csv"


def test_classify_shows_labels_with_probability_bars(alice_client, trained_model) -> None:
    response = alice_client.post(reverse("classification:classify"), {
        "model": trained_model.pk,
        "title": "Coronary artery disease and myocardial infarction",
        "abstract": "Patients with heart failure after <b>stenting</b> were followed.",
    })
    html = response.content.decode()
    assert response.status_code == 200
    assert 'class="prob' in html
    for label in trained_model.label_names:
        assert f'data-label="{label}"' in html
    assert "<b>stenting</b>" not in html  # the abstract is escaped when echoed back
    assert "Predicted:" in html


def test_classify_needs_some_text(alice_client, trained_model) -> None:
    response = alice_client.post(reverse("classification:classify"),
                                 {"model": trained_model.pk, "title": " ", "abstract": ""})
    assert "Give a title, an abstract, or both." in response.content.decode()


def test_evaluate_on_another_file_shows_its_scores(alice_client, trained_model) -> None:
    upload = SimpleUploadedFile("eval.csv", DEMO.read_bytes(), content_type="text/csv")
    response = alice_client.post(
        reverse("classification:model_evaluate", args=[trained_model.pk]), {"file": upload},
    )
    job = run_here(response)  # what the inference worker runs
    assert job.status == "completed", job.reason
    html = alice_client.get(response["Location"]).content.decode()
    assert 'id="evaluation"' in html
    assert "Evaluation on eval.csv" in html
    assert "Micro-F1" in html


def test_evaluate_on_an_unlabelled_file_explains_why_not(alice_client, trained_model) -> None:
    upload = SimpleUploadedFile("nolabels.csv", b"title;abstract\nHeart;Failure\n")
    response = alice_client.post(
        reverse("classification:model_evaluate", args=[trained_model.pk]), {"file": upload},
        follow=True,
    )
    assert "no label column" in response.content.decode()


def test_download_streams_the_artifact_as_a_zip(alice_client, trained_model) -> None:
    response = alice_client.get(reverse("classification:model_download",
                                        args=[trained_model.pk]))
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    assert response.streaming
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    names = archive.namelist()
    assert any(n.endswith("/manifest.json") for n in names)
    assert archive.testzip() is None


def test_an_untrained_model_has_nothing_to_download(alice_client, user, rows) -> None:
    model = rows.model(user, rows.dataset(user), status="pending")
    response = alice_client.get(reverse("classification:model_download", args=[model.pk]))
    assert response.status_code == 404


def test_deleting_a_model_with_a_running_job_is_refused(alice_client, user, rows) -> None:
    from classification.models import MLModel

    model = rows.model(user, rows.dataset(user), status="training")
    rows.job(model, status="running")
    alice_client.post(reverse("classification:model_delete", args=[model.pk]))
    assert MLModel.objects.filter(pk=model.pk).exists()
