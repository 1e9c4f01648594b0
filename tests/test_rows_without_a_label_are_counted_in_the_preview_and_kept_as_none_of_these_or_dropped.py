"""A multi-label file's rows without a label (an empty cell, or a label such as "none" or
"No label") are counted by the preview and, through the real upload pages, kept as examples of
"none of these" with an empty label set (the default) or dropped when asked; "none" never
becomes a class. A single-label file's empty cells are dropped, and the preview says so."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse
from rest_framework.test import APIClient

from dataset_management.models import Dataset
from dataset_management.selectors import dataset_split_examples
from tests.import_support import api_import, imports_run_queued

pytestmark = pytest.mark.django_db
FIXTURE = Path(__file__).parent / "fixtures" / "multilabel_with_rows_without_labels.csv"
LABELS = ["cardiology", "neurology", "oncology"]


def upload(client, content: bytes, name: str = "ml.csv"):
    return client.post(reverse("datasets:upload"), {
        "file": SimpleUploadedFile(name, content), "name": name, "split_ratios": "0.8,0.1,0.1",
        "seed": 42,
    })


def create(client, step1, **fields) -> Dataset:
    staging = step1.context["staging"]
    response = client.post(reverse("datasets:upload_confirm"), {
        "token": staging.token, "name": staging.name, "split_ratios": "0.8,0.1,0.1",
        "seed": "42", "action": "create", **fields,
    })
    assert response.status_code == 302, response.content.decode()[:2000]
    jobs = imports_run_queued()
    assert jobs[-1].status == "completed", jobs[-1].error
    return Dataset.objects.get(pk=jobs[-1].dataset_id)


def test_the_preview_counts_the_rows_without_a_label_and_says_they_are_kept(
    alice_client, media_root
) -> None:
    step1 = upload(alice_client, FIXTURE.read_bytes())
    report = step1.context["preview"].report
    assert report["multilabel"]
    assert report["no_label_rows"]["rows"] == 30
    assert report["no_label_rows"]["empty_cells"] == 15
    assert report["no_label_rows"]["none_labels"] == {"none": 10, "no label": 5}
    assert set(report["label_counts_in_sample"]) == set(LABELS)
    html = step1.content.decode()
    assert ("30 row(s) of the rows checked have no label: kept as examples of none of these"
            in html)
    assert "“none” (10), “no label” (5)" in html
    assert '<option value="keep" selected>' in html


def test_rows_without_a_label_are_kept_with_an_empty_label_set_by_default(
    alice_client, media_root
) -> None:
    dataset = create(alice_client, upload(alice_client, FIXTURE.read_bytes()))
    assert dataset.row_count == 120
    assert dataset.is_multilabel
    assert dataset.label_names == LABELS  # "none" is no class
    assert dataset.report["no_label_rows"]["action"] == "kept"
    assert "no label" not in dataset.report["dropped_by_reason"]
    rows = [dataset_split_examples(dataset=dataset, split=s) for s in
            ("train", "validation", "test")]
    empty = sum(1 for split in rows for labels in split.labels if labels == [])
    assert empty == 30
    assert sum(len(split) for split in rows) == 120


def test_rows_without_a_label_are_dropped_when_asked(alice_client, media_root) -> None:
    step1 = upload(alice_client, FIXTURE.read_bytes())
    again = alice_client.post(reverse("datasets:upload_confirm"), {
        "token": step1.context["staging"].token, "name": "ml.csv", "action": "refresh",
        "map_no_label_rows": "drop",
    })
    assert "have no label: dropped, as you asked." in again.content.decode()
    dataset = create(alice_client, step1, map_no_label_rows="drop")
    assert dataset.row_count == 90
    assert dataset.report["dropped_by_reason"] == {"no label": 30}
    assert dataset.report["no_label_rows"]["action"] == "dropped"
    assert dataset.label_names == LABELS
    assert sum(dataset.split_sizes.values()) == 90


def test_a_single_label_files_empty_cells_are_dropped_and_the_preview_says_why(
    alice_client, media_root
) -> None:
    lines = ["title,abstract,label"]
    lines += [f"Study {i},Patients were followed in cohort {i} for outcomes.,"
              f"{('cardiology', 'oncology', '')[i % 3]}" for i in range(30)]
    content = "\n".join(lines).encode()
    step1 = upload(alice_client, content, "single.csv")
    assert not step1.context["preview"].report["multilabel"]
    assert ("10 row(s) of the rows checked have an empty label cell: dropped, since in a "
            "single-label dataset every row needs its one class." in step1.content.decode())
    dataset = create(alice_client, step1)
    assert dataset.row_count == 20
    assert dataset.report["dropped_by_reason"] == {"no label": 10}
    assert dataset.label_names == ["cardiology", "oncology"]


def test_an_unknown_choice_for_rows_without_a_label_is_refused_with_a_clear_error(
    alice_client, media_root
) -> None:
    step1 = upload(alice_client, FIXTURE.read_bytes())
    again = alice_client.post(reverse("datasets:upload_confirm"), {
        "token": step1.context["staging"].token, "name": "ml.csv", "action": "refresh",
        "map_no_label_rows": "maybe",
    })
    assert "Rows without a label are &#x27;keep&#x27; or &#x27;drop&#x27;, not" in (
        again.content.decode())


def test_the_api_and_the_cli_take_the_choice_too(api_token, media_root, tmp_path) -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token}")
    dataset = api_import(client, {
        "file": SimpleUploadedFile("ml.csv", FIXTURE.read_bytes()), "name": "API",
        "mapping": json.dumps({"no_label_rows": "drop"}),
    })
    assert dataset["row_count"] == 90
    copy = tmp_path / "cli.csv"
    copy.write_bytes(FIXTURE.read_bytes() + b"\n")
    out = io.StringIO()
    call_command("import_dataset", str(copy), "--name", "CLI", "--owner", "alice",
                 "--no-label-rows", "drop", stdout=out)
    assert "dropped 30: no label" in out.getvalue()
