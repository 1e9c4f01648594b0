"""Uploading and deleting a dataset each add a line to its project's activity log, naming who
did it; a dataset saved without a project joins its owner's personal project."""

from __future__ import annotations

import pytest

from dataset_management.services import dataset_create_from_upload, dataset_delete
from projects import policy
from projects.models import Activity, Role
from projects.services import ProjectError, member_set, project_create, project_personal
from tests.plugins.datasets import FORMATS


def test_an_upload_and_a_delete_are_logged_in_the_datasets_project(import_file, user):
    team = project_create(user=user, name="Team")
    dataset = import_file(FORMATS / "comma.csv", name="Small", project=team)
    assert dataset.project == team
    uploaded = Activity.objects.get(verb="dataset_uploaded")
    assert (uploaded.project, uploaded.actor, uploaded.subject_id) == (team, user,
                                                                       str(dataset.pk))
    assert uploaded.summary == "alice uploaded dataset “Small” (12 rows)"

    dataset_delete(dataset=dataset, user=user)
    deleted = Activity.objects.get(verb="dataset_deleted")
    assert (deleted.project, deleted.actor) == (team, user)
    assert deleted.summary == "alice deleted dataset “Small”"


def test_without_a_project_it_joins_the_owners_personal_one(import_file, user):
    assert import_file(FORMATS / "comma.csv").project == project_personal(user=user)


def test_a_viewer_may_not_delete_and_nothing_is_logged(import_file, user, other_user):
    dataset = import_file(FORMATS / "comma.csv")
    member_set(actor=user, project=dataset.project, member=other_user, role=Role.VIEWER)
    with pytest.raises(policy.RoleRequired):
        dataset_delete(dataset=dataset, user=other_user)
    assert not Activity.objects.filter(verb="dataset_deleted").exists()


def test_no_owner_and_no_project_is_refused_before_reading_the_file(db, media_root):
    with pytest.raises(ProjectError, match="needs a project"), \
            (FORMATS / "comma.csv").open("rb") as handle:
        dataset_create_from_upload(owner=None, uploaded_file=handle, name="Nobody's")
