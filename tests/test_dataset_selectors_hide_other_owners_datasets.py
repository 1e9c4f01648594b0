import pytest
from django.conf import settings

from dataset_management.models import Dataset
from dataset_management.selectors import (
    dataset_get,
    dataset_length_histogram,
    dataset_list,
    dataset_models_using,
    dataset_sample_rows,
)
from dataset_management.services import dataset_delete
from tests.plugins.datasets import media_files


def test_another_owners_dataset_is_not_found(small_dataset, other_user, user):
    assert dataset_get(owner=user, pk=small_dataset.pk) == small_dataset
    with pytest.raises(Dataset.DoesNotExist):
        dataset_get(owner=other_user, pk=small_dataset.pk)
    assert list(dataset_list(owner=other_user)) == []
    assert list(dataset_list(owner=user)) == [small_dataset]


def test_sample_rows_histogram_and_models(small_dataset):
    rows = dataset_sample_rows(dataset=small_dataset, n=5)
    assert [r["row_id"] for r in rows] == [0, 1, 2, 3, 4]
    histogram = dataset_length_histogram(dataset=small_dataset)
    assert sum(histogram["counts"]) == 12
    assert list(dataset_models_using(dataset=small_dataset)) == []


def test_delete_removes_the_row_and_its_files(small_dataset, django_capture_on_commit_callbacks):
    assert media_files()
    with django_capture_on_commit_callbacks(execute=True):
        dataset_delete(dataset=small_dataset)
    assert Dataset.objects.count() == 0
    assert media_files() == set()
    assert (settings.MEDIA_ROOT / "datasets").exists() is False or not any(
        (settings.MEDIA_ROOT / "datasets").iterdir()
    )
