"""Upload -> preview (detected mapping, overrides) -> confirm; detail; delete with a warning."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from dataset_management.models import Dataset, ImportJob
from tests.import_support import import_run_last

pytestmark = pytest.mark.django_db
DEMO = Path(__file__).resolve().parent / "fixtures" / "demo_slice.csv"


def upload(client, content: bytes = b"", name: str = "demo_slice.csv", **fields):
    data = {"file": SimpleUploadedFile(name, content or DEMO.read_bytes()), "name": "Demo",
            "split_ratios": "0.8,0.1,0.1", "seed": 42, **fields}
    return client.post(reverse("datasets:upload"), data)


def test_upload_shows_a_preview_with_the_detected_mapping(alice_client) -> None:
    response = upload(alice_client)
    assert response.status_code == 200
    html = response.content.decode()
    assert "Check your dataset" in html
    assert '<option value="group" selected>' in html
    assert '<option value="title" selected>' in html
    assert "multi-label" in html
    assert 'id="preview-rows"' in html
    assert not Dataset.objects.exists()  # nothing saved before confirmation


def test_confirm_queues_the_import_whose_page_leads_to_the_dataset(alice_client, user) -> None:
    staging = upload(alice_client).context["staging"]
    response = alice_client.post(reverse("datasets:upload_confirm"), {
        "token": staging.token, "name": "Demo slice", "split_ratios": "0.7,0.15,0.15",
        "seed": "7", "map_label": "group", "action": "create",
    })
    job = ImportJob.objects.get(owner=user)
    assert response["Location"] == reverse("datasets:import_detail", args=[job.pk])
    assert not Dataset.objects.exists()  # the worker makes it
    assert "Queued" in alice_client.get(response["Location"]).content.decode()
    assert import_run_last().status == "completed"
    dataset = Dataset.objects.get(owner=user)
    assert dataset.name == "Demo slice"
    assert dataset.row_count == 200
    assert dataset.split_seed == 7
    page = alice_client.get(response["Location"]).content.decode()
    assert reverse("datasets:detail", args=[dataset.pk]) in page
    html = alice_client.get(reverse("datasets:detail", args=[dataset.pk])).content.decode()
    assert 'id="samples"' in html
    assert "label-chart" in html
    assert "length-chart" in html
    assert f"{dataset.split_sizes['train']} / {dataset.split_sizes['validation']}" in html


def test_a_wrong_column_override_explains_and_keeps_the_preview(alice_client) -> None:
    staging = upload(alice_client).context["staging"]
    response = alice_client.post(reverse("datasets:upload_confirm"), {
        "token": staging.token, "name": "Demo", "split_ratios": "0.8,0.1,0.1", "seed": "42",
        "map_label": "title", "map_title": "title", "action": "refresh",
    })
    html = response.content.decode()
    assert "Those columns do not work" in html
    assert "Check your dataset" in html


def test_an_unreadable_file_says_why(alice_client) -> None:
    response = upload(alice_client, content=b"title;abstract;group\n", name="empty.csv")
    assert response.status_code == 400
    assert "no data rows" in response.content.decode()


def test_an_expired_or_foreign_token_starts_over(alice_client) -> None:
    response = alice_client.post(reverse("datasets:upload_confirm"), {
        "token": "0" * 32, "name": "x", "action": "create",
    })
    assert response.status_code == 302
    assert response["Location"] == reverse("datasets:upload")
    response = alice_client.post(reverse("datasets:upload_confirm"), {
        "token": "../../etc", "name": "x", "action": "create",
    })
    assert response.status_code == 302


def test_a_staged_file_is_private_to_its_uploader(alice_client, bob_client) -> None:
    staging = upload(alice_client).context["staging"]
    response = bob_client.post(reverse("datasets:upload_confirm"), {
        "token": staging.token, "name": "stolen", "action": "create",
    })
    assert response.status_code == 302
    assert not Dataset.objects.filter(name="stolen").exists()


def test_delete_warns_about_models_and_keeps_them(alice_client, user, rows) -> None:
    from classification.models import MLModel

    staging = upload(alice_client).context["staging"]
    alice_client.post(reverse("datasets:upload_confirm"), {
        "token": staging.token, "name": "Demo", "split_ratios": "0.8,0.1,0.1", "seed": "42",
        "action": "create",
    })
    import_run_last()
    dataset = Dataset.objects.get(owner=user)
    model = rows.model(user, dataset, name="Uses the demo")
    page = alice_client.get(reverse("datasets:detail", args=[dataset.pk])).content.decode()
    assert "These models were trained on this dataset" in page
    assert "Uses the demo" in page

    alice_client.post(reverse("datasets:delete", args=[dataset.pk]))
    assert not Dataset.objects.filter(pk=dataset.pk).exists()
    model.refresh_from_db()
    assert model.dataset_id is None
    assert MLModel.objects.filter(pk=model.pk).exists()


def test_detail_shows_the_stored_validation_report(alice_client, user) -> None:
    rows = DEMO.read_bytes().decode("utf-8-sig").splitlines()
    # Two rows without text and one exact repeat of the first article, with another label.
    header, first = rows[0], rows[1]
    extra = [";;cardiovascular", ";;neurological", first.rsplit(";", 1)[0] + ";oncological"]
    content = "\n".join([header, *rows[1:], *extra]).encode()
    staging = upload(alice_client, content=content, name="dirty.csv").context["staging"]
    alice_client.post(reverse("datasets:upload_confirm"), {
        "token": staging.token, "name": "Dirty", "split_ratios": "0.8,0.1,0.1", "seed": "42",
        "action": "create",
    })
    import_run_last()
    dataset = Dataset.objects.get(owner=user)
    html = alice_client.get(reverse("datasets:detail", args=[dataset.pk])).content.decode()
    assert 'id="validation-report"' in html
    report = dataset.report
    assert f"<dt>Rows read</dt><dd>{report['rows_read']}</dd>" in html
    assert f"<dt>Rows dropped</dt><dd>{report['rows_dropped']}</dd>" in html
    assert report["rows_dropped"] >= 2
    for reason in report["dropped_by_reason"]:
        assert reason in html
    assert "with conflicting labels" in html
    assert 'id="cooccurrence"' in html
    assert "Length (words)" in html
