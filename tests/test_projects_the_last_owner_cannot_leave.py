"""A project never has zero owners: its last owner cannot leave (nor be demoted) and is told
why; any other member leaves with one button and no longer sees the project."""

from __future__ import annotations

import pytest
from django.urls import reverse

from projects import services
from projects.middleware import SESSION_KEY
from projects.models import Membership

pytestmark = pytest.mark.django_db


@pytest.fixture
def project(user):
    return services.project_create(user=user, name="Cardiology reviews")


def test_the_last_owner_cannot_leave(alice_client, user, project) -> None:
    response = alice_client.post(reverse("projects:leave", args=[project.pk]), follow=True)
    assert response.redirect_chain[-1][0] == reverse("projects:detail", args=[project.pk])
    assert ("The last owner cannot leave or be removed: make someone else owner first."
            in response.content.decode())
    assert Membership.objects.get(project=project, user=user).role == "owner"


def test_the_last_owner_cannot_demote_themselves(alice_client, user, project) -> None:
    response = alice_client.post(reverse("projects:member_role", args=[project.pk, user.pk]),
                                 {"role": "viewer"}, follow=True)
    assert "A project needs at least one owner" in response.content.decode()
    assert Membership.objects.get(project=project, user=user).role == "owner"


def test_a_member_leaves_and_the_project_is_gone_for_them(bob_client, user, other_user,
                                                          project) -> None:
    services.member_add(user=user, project=project, identifier="bob", role="reviewer")
    bob_client.post(reverse("projects:switch"), {"project": project.pk})
    response = bob_client.post(reverse("projects:leave", args=[project.pk]))
    assert response["Location"] == reverse("projects:list")
    assert not Membership.objects.filter(project=project, user=other_user).exists()
    assert SESSION_KEY not in bob_client.session
    assert bob_client.get(reverse("projects:detail", args=[project.pk])).status_code == 404


def test_a_second_owner_lets_the_first_one_leave(alice_client, user, other_user, project) -> None:
    services.member_add(user=user, project=project, identifier="bob", role="owner")
    response = alice_client.post(reverse("projects:leave", args=[project.pk]))
    assert response["Location"] == reverse("projects:list")
    assert not Membership.objects.filter(project=project, user=user).exists()
