"""import_dataset puts the dataset in --project (the owner, if named, must be a maintainer
there), else in the owner's personal project, else in the only superuser's or the demo user's.
With none of those it refuses in one line: it used to make a dataset nobody could see."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from dataset_management.models import Dataset
from projects.models import Activity, Role
from projects.services import member_set, project_create, project_personal
from tests.plugins.datasets import FORMATS

pytestmark = pytest.mark.django_db
CSV = str(FORMATS / "comma.csv")


def run(*options: str) -> Dataset:
    out = StringIO()
    call_command("import_dataset", CSV, "--name", "Shared", *options, stdout=out)
    assert out.getvalue().splitlines()[-1] == f"dataset_id={Dataset.objects.get().pk}"
    return Dataset.objects.get()


def test_without_an_owner_or_a_project_to_fall_back_on_it_refuses(media_root):
    with pytest.raises(CommandError) as refused:
        run()
    assert str(refused.value) == (
        "No owner or project for the dataset: give --owner USERNAME or --project ID "
        "(there is no superuser or 'demo' user to default to).")
    assert not Dataset.objects.exists()


def test_with_several_superusers_it_will_not_guess_whose_project(media_root):
    for name in ("root", "admin"):
        get_user_model().objects.create_superuser(name, f"{name}@example.org", "pw-123-abc")
    with pytest.raises(CommandError, match="There are several superusers"):
        run()
    assert not Dataset.objects.exists()


def test_the_only_superuser_or_else_the_demo_user_is_the_default(media_root):
    demo = get_user_model().objects.create_user("demo", "demo@example.org", "pw-123-abc")
    dataset = run()
    assert (dataset.owner, dataset.project) == (demo, project_personal(user=demo))
    dataset.delete()
    admin = get_user_model().objects.create_superuser("admin", "a@example.org", "pw-123-abc")
    dataset = run()
    assert (dataset.owner, dataset.project) == (admin, project_personal(user=admin))


def test_project_puts_the_dataset_there_and_logs_who_imported_it(media_root, user):
    team = project_create(user=user, name="Team")
    dataset = run("--owner", "alice", "--project", str(team.pk))
    assert (dataset.project, dataset.owner) == (team, user)
    line = Activity.objects.get(project=team, verb="dataset_imported")
    assert (line.actor, line.subject_id) == (user, str(dataset.pk))
    assert "alice imported dataset “Shared”" in line.summary


def test_project_without_an_owner_is_imported_by_the_system(media_root, user):
    team = project_create(user=user, name="Team")
    dataset = run("--project", str(team.pk))
    assert (dataset.project, dataset.owner) == (team, None)
    assert Activity.objects.get(project=team, verb="dataset_imported").actor is None


def test_an_owner_below_maintainer_in_the_project_is_refused(media_root, user, other_user):
    team = project_create(user=user, name="Team")
    with pytest.raises(CommandError) as refused:
        run("--owner", "bob", "--project", str(team.pk))
    assert str(refused.value) == ("'bob' may not import into project "
                                  f"{team.pk} (“Team”): that needs the maintainer role, and "
                                  "they are not a member.")
    member_set(actor=user, project=team, member=other_user, role=Role.REVIEWER)
    with pytest.raises(CommandError, match="needs the maintainer role, and they are a reviewer"):
        run("--owner", "bob", "--project", str(team.pk))
    assert not Dataset.objects.exists()
    member_set(actor=user, project=team, member=other_user, role=Role.MAINTAINER)
    assert run("--owner", "bob", "--project", str(team.pk)).project == team


def test_a_project_that_does_not_exist_is_refused(media_root, user):
    with pytest.raises(CommandError, match=r"^No project with id 999\.$"):
        run("--owner", "alice", "--project", "999")
    assert not Dataset.objects.exists()
