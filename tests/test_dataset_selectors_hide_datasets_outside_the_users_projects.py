import pytest
from django.conf import settings
from django.http import Http404

from dataset_management.models import Dataset
from dataset_management.selectors import (
    dataset_get,
    dataset_length_histogram,
    dataset_list,
    dataset_models_using,
    dataset_sample_rows,
)
from dataset_management.services import dataset_delete
from projects import policy
from projects.models import Role
from projects.services import member_set, project_create, project_personal
from tests.plugins.datasets import media_files


def test_a_dataset_outside_the_users_projects_is_not_found(small_dataset, other_user, user):
    assert dataset_get(user=user, pk=small_dataset.pk) == small_dataset
    with pytest.raises(Http404):
        dataset_get(user=other_user, pk=small_dataset.pk)
    with pytest.raises(Http404):
        dataset_get(user=user, pk="not a number")
    assert list(dataset_list(user=other_user)) == []
    assert list(dataset_list(user=user)) == [small_dataset]


def test_a_list_narrowed_to_a_project_holds_only_its_datasets(small_dataset, user):
    elsewhere = project_create(user=user, name="Elsewhere")
    assert list(dataset_list(user=user, project=project_personal(user=user))) == [small_dataset]
    assert list(dataset_list(user=user, project=elsewhere)) == []


def test_a_viewer_sees_a_dataset_but_may_not_delete_it(small_dataset, other_user, user):
    member_set(actor=user, project=small_dataset.project, member=other_user, role=Role.VIEWER)
    assert dataset_get(user=other_user, pk=small_dataset.pk) == small_dataset
    assert list(dataset_list(user=other_user)) == [small_dataset]
    with pytest.raises(policy.RoleRequired, match="needs the maintainer role"):
        dataset_get(user=other_user, pk=small_dataset.pk, action=policy.Action.DELETE)


def test_sample_rows_histogram_and_models(small_dataset, user):
    rows = dataset_sample_rows(dataset=small_dataset, n=5)
    assert [r["row_id"] for r in rows] == [0, 1, 2, 3, 4]
    histogram = dataset_length_histogram(dataset=small_dataset)
    assert sum(histogram["counts"]) == 12
    assert list(dataset_models_using(dataset=small_dataset, user=user)) == []


def test_delete_removes_the_row_and_its_files(small_dataset, django_capture_on_commit_callbacks):
    assert media_files()
    with django_capture_on_commit_callbacks(execute=True):
        dataset_delete(dataset=small_dataset)
    assert Dataset.objects.count() == 0
    assert media_files() == set()
    assert (settings.MEDIA_ROOT / "datasets").exists() is False or not any(
        (settings.MEDIA_ROOT / "datasets").iterdir()
    )
