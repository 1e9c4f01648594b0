"""Adding a member by a name two accounts answer to (usernames differing only in case) is
refused with a sentence asking for the exact username, at the page's service and the CLI alike,
rather than adding whichever account the database returns first."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from projects import services
from projects.models import Membership


def test_two_accounts_answering_to_one_name_are_refused_everywhere(user: Any) -> None:
    project = services.project_create(user=user, name="Team")
    users = get_user_model().objects
    users.create_user("Sam", "sam1@example.org")
    users.create_user("sam", "sam2@example.org")
    with pytest.raises(services.ProjectError, match="More than one user matches “SAM”"):
        services.member_add(user=user, project=project, identifier="SAM", role="viewer")
    with pytest.raises(CommandError, match="More than one user matches “SAM”"):
        call_command("project_member", str(project.pk), "SAM", "viewer")
    assert Membership.objects.filter(project=project).count() == 1
