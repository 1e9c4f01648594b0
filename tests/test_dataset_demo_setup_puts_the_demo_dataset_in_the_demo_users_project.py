"""setup_demo imports the demo dataset once, into the demo user's personal project, and says
so in its project's log."""

from __future__ import annotations

from io import StringIO

from django.contrib.auth import get_user_model
from django.core.management import call_command

from dataset_management.models import Dataset
from projects.models import Activity
from projects.services import project_create, project_personal


def test_the_demo_dataset_joins_the_demo_users_personal_project_once(db, media_root):
    out = StringIO()
    call_command("setup_demo", stdout=out)
    demo = get_user_model().objects.get(username="demo")
    home = project_personal(user=demo)
    dataset = Dataset.objects.get()
    assert (dataset.project, dataset.owner) == (home, demo)
    assert "imported the demo dataset (2855 rows) into “demo's project”" in out.getvalue()
    assert Activity.objects.get(verb="dataset_imported").project == home

    # Moved to a team project, it is still "imported already": a restart does not copy it back.
    Dataset.objects.filter(pk=dataset.pk).update(
        project=project_create(user=demo, name="Team"))
    call_command("setup_demo", stdout=StringIO())
    assert Dataset.objects.count() == 1
