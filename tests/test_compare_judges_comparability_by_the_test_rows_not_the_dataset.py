"""Compare calls two models comparable when they were scored on the same test rows, whatever
their datasets: a model retrained on a dataset made from reviews (which keeps its source's test
split) compares like for like with its parent; a model of a dataset with other test rows does
not. Only models of one dataset may be combined into an ensemble."""

from __future__ import annotations

import pytest
from django.urls import reverse

from classification.models import MLModel
from classification.review import services as review
from classification.views.presenters import evaluation_rows_digest
from tests.batch_support import completed_batch

pytestmark = pytest.mark.django_db


def a_model(dataset, name: str) -> MLModel:
    return MLModel.objects.create(
        name=name, model_type="tfidf_logreg", dataset=dataset, status="trained",
        label_names=dataset.label_names, is_multilabel=dataset.is_multilabel,
        metrics={"n": 20, "micro_f1": 0.8, "macro_f1": 0.7}, artifact_path="/nowhere",
    )


def reviewed_dataset(parent: MLModel, user):
    """The dataset the review makes from one corrected article and the parent's rows."""
    labels = parent.label_names
    batch = completed_batch(user, parent, [(1, "A fresh article on statins", [labels[0]],
                                            *[0.5] * len(labels))], labels)
    review.review_items_ensure(batch=batch)
    item = batch.review_items.get(row=1)
    review.review_item_correct(item=item, reviewer=user, labels=[labels[-1]])
    return review.review_dataset_create(batch=batch, user=user).dataset


def compare(client, *models: MLModel) -> str:
    query = "&".join(f"ids={m.pk}" for m in models)
    return client.get(reverse("classification:model_compare") + "?" + query).content.decode()


def test_a_model_retrained_from_reviews_compares_like_for_like_with_its_parent(
    slice_dataset, user, alice_client
) -> None:
    parent = a_model(slice_dataset, "Parent")
    derived = reviewed_dataset(parent, user)
    child = a_model(derived, "Retrained from reviews")

    page = compare(alice_client, parent, child)

    assert derived.pk != slice_dataset.pk
    assert evaluation_rows_digest(dataset=derived) == evaluation_rows_digest(dataset=slice_dataset)
    assert 'id="mixed-datasets"' not in page
    assert "not comparable" not in page
    assert 'id="same-test-rows"' in page
    assert 'id="id_ensemble_name"' not in page  # an ensemble still needs one dataset


def test_models_of_datasets_with_other_test_rows_are_not_comparable(
    slice_dataset, small_dataset, alice_client
) -> None:
    page = compare(alice_client, a_model(slice_dataset, "Slice"), a_model(small_dataset, "Small"))

    assert evaluation_rows_digest(dataset=slice_dataset) != evaluation_rows_digest(
        dataset=small_dataset)
    assert 'id="mixed-datasets"' in page
    assert "scored on different test rows, so their scores are not comparable" in page


def test_models_of_one_dataset_are_comparable_and_may_be_combined(slice_dataset, alice_client):
    page = compare(alice_client, a_model(slice_dataset, "One"), a_model(slice_dataset, "Two"))

    assert 'id="mixed-datasets"' not in page
    assert 'id="same-test-rows"' not in page
    assert 'id="id_ensemble_name"' in page
