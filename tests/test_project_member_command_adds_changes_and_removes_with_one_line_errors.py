"""`manage.py project_member PROJECT_ID USERNAME ROLE` adds a member or changes their role, and
`--remove` removes one; an unknown project, user or role, or the last owner, is refused in one
line with exit status 1, and the project is left as it was.
"""

from __future__ import annotations

import subprocess
import sys
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from projects import services
from projects.models import Activity, Membership, Project
from tests.plugins.datasets import ROOT
from tests.plugins.worker import worker_env

pytestmark = pytest.mark.django_db


@pytest.fixture
def team(user: Any) -> Project:
    return services.project_create(user=user, name="Cardiology team")


def manage(*args: Any) -> str:
    out = StringIO()
    call_command("project_member", *map(str, args), stdout=out)
    return out.getvalue()


def roles(project: Project) -> dict[str, str]:
    return dict(project.memberships.values_list("user__username", "role"))


def test_it_adds_a_member_then_changes_the_role_then_removes_them(
    team: Project, other_user: Any,
) -> None:
    assert manage(team.pk, "bob", "reviewer") == (
        f"bob is reviewer of “Cardiology team” (project {team.pk}).\n")
    assert roles(team) == {"alice": "owner", "bob": "reviewer"}
    added = Activity.objects.filter(project=team, verb="member_added").get()
    assert added.actor is None
    assert added.summary == "An administrator added bob as reviewer"

    manage(team.pk, "bob@example.org", "owner")
    assert roles(team) == {"alice": "owner", "bob": "owner"}
    assert Activity.objects.filter(project=team, verb="member_role").count() == 1

    assert "bob is no longer a member" in manage(team.pk, "bob", "--remove")
    assert roles(team) == {"alice": "owner"}


@pytest.mark.parametrize(("args", "message"), [
    (("999999", "bob", "viewer"), "No project has the id 999999."),
    (("abc", "bob", "viewer"), "No project has the id abc."),
    (("{team}", "nobody", "viewer"), "No user is called “nobody”."),
    (("{team}", "bob", "admin"), "Unknown role “admin”; choose one of viewer, reviewer, "
                                 "maintainer, owner."),
    (("{team}", "bob"), "Unknown role “”; choose one of viewer, reviewer, maintainer, owner."),
    (("{team}", "bob", "viewer", "--remove"), "--remove takes no ROLE."),
    (("{team}", "alice", "viewer"), "A project needs at least one owner: make someone else "
                                    "owner first."),
    (("{team}", "alice", "--remove"), "The last owner cannot leave or be removed: make someone "
                                      "else owner first."),
    (("{team}", "bob", "--remove"), "bob is not a member of this project."),
])
def test_a_refusal_is_one_line_with_exit_status_1_and_changes_nothing(
    team: Project, other_user: Any, args: tuple[str, ...], message: str,
) -> None:
    before = (roles(team), Activity.objects.count())
    with pytest.raises(CommandError) as refused:
        manage(*(a.format(team=team.pk) for a in args))
    assert str(refused.value) == message
    assert refused.value.returncode == 1  # what manage.py exits with
    assert (roles(team), Activity.objects.count()) == before
    assert not Membership.objects.filter(user=other_user).exists()


def test_the_process_exits_1_with_the_sentence_on_one_line(transactional_db: None,
                                                           tmp_path: Any) -> None:
    # The suite's own migrated test database, as the process's: a migrate of a fresh one took
    # a minute beside CI's other lanes.
    env = worker_env(MEDIA_ROOT=str(tmp_path / "media"))
    command = [sys.executable, "manage.py"]
    unknown = subprocess.run([*command, "project_member", "4242", "nobody", "viewer"], cwd=ROOT,
                             env=env, capture_output=True, text=True, timeout=120)
    assert unknown.returncode == 1
    assert unknown.stderr.splitlines() == ["CommandError: No project has the id 4242."]
