"""Reviewed articles of a batch become a new labelled dataset (with the rows the model learned
from, the corrections in the training split) through the ordinary dataset import, and one
request starts a retraining of the same model type and settings on it, which a real worker
trains into a model that classifies."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from django.urls import reverse

from classification import services
from classification.engine.types import article_text
from classification.models import MLModel
from classification.review import selectors
from classification.review.models import ReviewRound
from dataset_management.models import Dataset
from dataset_management.selectors import dataset_rows_file
from tests.batch_support import DEMO_CSV, DEMO_SLICE, create_batch, input_rows, wait_for_batch
from tests.job_support import fast_env, wait_for_job

REVIEWED = 12


def articles_file(path: Path, n: int) -> dict[str, list[str]]:
    """n demo articles the model never saw, as a batch input; their true labels by title."""
    seen = {row["title"] for row in input_rows(DEMO_SLICE)}
    fresh = [row for row in input_rows(DEMO_CSV) if row["title"] not in seen][:n]
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["title", "abstract"])
        writer.writerows([row["title"].strip(), row["abstract"].strip()] for row in fresh)
    return {row["title"].strip(): row["group"].split("|") for row in fresh}


@pytest.mark.worker
@pytest.mark.timeout(600)
def test_corrections_become_a_dataset_and_one_request_retrains_a_model_that_predicts(
    start_worker, slice_dataset, user, alice_client, settings: Any, tmp_path: Path
) -> None:
    settings.MODEL_ARTIFACT_ROOT = tmp_path / "artifacts"
    start_worker(**fast_env())  # one solo worker on every queue: training and batches
    base_job = services.training_job_create(owner=user, dataset=slice_dataset,
                                            model_type="tfidf_logreg", name="Base",
                                            config={"seed": 7})
    base = wait_for_job(base_job, {"completed", "failed"}, timeout=180).ml_model
    assert base_job.status == "completed", base_job.reason
    truth = articles_file(tmp_path / "new-articles.csv", 40)
    batch = wait_for_batch(create_batch(owner=user, ml_model=base,
                                        path=tmp_path / "new-articles.csv"))
    assert batch.status == "completed", batch.reason

    page = reverse("classification:review:page", args=[batch.pk.hex])
    assert alice_client.get(page).status_code == 200
    queue = list(selectors.review_queue(batch=batch))
    assert len(queue) == 40
    assert [i.uncertainty for i in queue] == sorted((i.uncertainty for i in queue), reverse=True)
    reviewed = queue[:REVIEWED]  # the least certain first, as the page suggests
    for item in reviewed:
        response = alice_client.post(
            reverse("classification:review:item", args=[batch.pk.hex, item.row]),
            {"labels": truth[item.title]}, HTTP_ACCEPT="application/json")
        assert response.status_code == 200, response.content
    agreement = selectors.review_agreement(batch=batch)
    assert agreement["reviewed"] == REVIEWED

    response = alice_client.post(
        reverse("classification:review:retrain", args=[batch.pk.hex]),
        {"include_training_data": "1"})
    round_ = ReviewRound.objects.select_related("dataset", "training_job").get()
    assert response.status_code == 302
    assert response["Location"] == reverse("classification:job_detail",
                                           args=[round_.training_job_id])

    # The dataset: the slice's rows in their own splits, plus the corrections to train on.
    dataset = round_.dataset
    assert (round_.corrections, round_.training_rows) == (REVIEWED, slice_dataset.row_count)
    assert dataset.owner == user
    assert dataset.row_count == slice_dataset.row_count + REVIEWED
    assert dataset.label_names == slice_dataset.label_names
    assert dataset.split_sizes == {
        **slice_dataset.split_sizes, "train": slice_dataset.split_sizes["train"] + REVIEWED}
    table = pq.read_table(dataset_rows_file(dataset=dataset)).to_pylist()
    by_text = {row["text"]: row for row in table}
    for item in reviewed:
        row = by_text[article_text(item.title, item.abstract)]
        assert row["split"] == "train"
        assert sorted(row["labels"]) == sorted(truth[item.title])

    # The retraining: same type and settings, on the new dataset, trained by the worker.
    job = wait_for_job(round_.training_job, {"completed", "failed"}, timeout=180)
    assert job.status == "completed", job.reason
    model = MLModel.objects.get(pk=job.ml_model_id)
    assert model.is_trained
    assert model.dataset == dataset
    assert (model.model_type, model.parameters) == (base.model_type, base.parameters)
    assert model.name == f"Base + {REVIEWED} reviewed"
    texts = [article_text(item.title, item.abstract) for item in reviewed]
    predictions = services.mlmodel_predict(ml_model=model, texts=texts)
    assert len(predictions) == REVIEWED
    for prediction in predictions:
        assert prediction["labels"]
        assert set(prediction["labels"]) <= set(model.label_names)
        assert set(prediction["probabilities"]) == set(model.label_names)
    page_html = alice_client.get(page).content.decode()
    assert model.name in page_html
    assert dataset.name in page_html

    # The same corrections again make no second copy of the same dataset.
    again = alice_client.post(reverse("classification:review:dataset", args=[batch.pk.hex]),
                              {"include_training_data": "1"})
    assert again["Location"] == reverse("datasets:detail", args=[dataset.pk])
    assert Dataset.objects.filter(owner=user).count() == 2  # the slice and this one
    assert ReviewRound.objects.count() == 2
