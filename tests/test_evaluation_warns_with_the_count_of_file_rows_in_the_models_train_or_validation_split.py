"""Evaluating a file that holds rows the model was trained or validated on warns, with the
count: on the evaluate page, in the result every caller gets (`training_overlap`), and in
`manage.py evaluate`'s output. Rows match on their normalised text, so a re-cased or
re-punctuated copy of a training row still counts; the dataset's test rows never do."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from classification import ml_models, services
from classification.jobs.training import load_split
from classification.models import MLModel
from dataset_management.selectors import dataset_rows_iter
from tests.evaluation_support import run_here
from tests.job_support import FIXTURES

pytestmark = pytest.mark.django_db


@pytest.fixture
def trained(slice_dataset, tmp_path: Path) -> MLModel:
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


def rows_of(dataset, split: str) -> list[dict]:
    return [row for row in dataset_rows_iter(dataset=dataset, with_record=False)
            if row["split"] == split]


def write_file(path: Path, rows: list[dict], *, shout: bool = False) -> Path:
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(["text", "labels"])
        for row in rows:
            text = row["text"].upper() + " !!" if shout else row["text"]
            writer.writerow([text, "|".join(row["labels"])])
    return path


def test_the_training_file_itself_is_counted_by_split_and_warned_about_by_evaluate(
    trained, slice_dataset
) -> None:
    sizes = {split: len(rows_of(slice_dataset, split)) for split in ("train", "validation")}
    out = io.StringIO()

    call_command("evaluate", str(trained.pk), str(FIXTURES / "demo_slice.csv"), stdout=out)

    printed = out.getvalue()
    summary = json.loads(printed.strip().splitlines()[-1])
    seen = sizes["train"] + sizes["validation"]
    assert summary["training_overlap"] == seen
    assert 0 < seen < 200
    assert (f"{seen} of 200 rows of this file are in the model's training data "
            f"({sizes['train']} in the train split, {sizes['validation']} in the validation "
            f"split of Slice)") in printed


def test_recased_training_rows_count_and_test_rows_do_not(trained, slice_dataset, tmp_path) -> None:
    train, test = rows_of(slice_dataset, "train"), rows_of(slice_dataset, "test")
    path = write_file(tmp_path / "mixed.csv", train[:3], shout=True)
    with path.open("a", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        for row in test:
            writer.writerow([row["text"], "|".join(row["labels"])])

    result = services.mlmodel_evaluate_file(ml_model=trained, path=path)

    assert result["training_overlap"] == {"rows": 3, "train": 3, "validation": 0,
                                          "of": 3 + len(test), "dataset": "Slice"}


def test_a_file_of_the_test_split_only_is_scored_without_a_warning(
    trained, slice_dataset, tmp_path
) -> None:
    path = write_file(tmp_path / "test-only.csv", rows_of(slice_dataset, "test"))
    out = io.StringIO()

    call_command("evaluate", str(trained.pk), str(path), stdout=out)

    assert json.loads(out.getvalue().strip().splitlines()[-1])["training_overlap"] == 0
    assert "training data" not in out.getvalue()


def test_the_evaluate_page_shows_the_warning_with_the_count(
    trained, slice_dataset, alice_client
) -> None:
    upload = SimpleUploadedFile("slice.csv", (FIXTURES / "demo_slice.csv").read_bytes(),
                                content_type="text/csv")
    seen = len(rows_of(slice_dataset, "train")) + len(rows_of(slice_dataset, "validation"))

    response = alice_client.post(reverse("classification:model_evaluate", args=[trained.pk]),
                                 {"file": upload})
    job = run_here(response)  # what the inference worker runs

    assert job.result["training_overlap"]["rows"] == seen
    page = alice_client.get(response["Location"]).content.decode()
    assert f'id="training-overlap" data-rows="{seen}"' in page
    assert f"{seen} of 200 rows of this file are in the model&#x27;s training data" in page
