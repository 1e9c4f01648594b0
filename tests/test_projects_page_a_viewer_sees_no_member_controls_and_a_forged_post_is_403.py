"""Buttons a role may not use are absent, and the server refuses them anyway: a viewer's forged
POST to any owner's form is 403 with the sentence naming the role, and changes nothing."""

from __future__ import annotations

import pytest
from django.urls import reverse

from projects import services
from projects.models import Invitation, Membership, Project

pytestmark = pytest.mark.django_db


@pytest.fixture
def project(user, other_user):
    project = services.project_create(user=user, name="Cardiology reviews")
    services.member_add(user=user, project=project, identifier="bob", role="viewer")
    return project


def test_a_viewer_sees_no_member_management_controls(bob_client, project) -> None:
    response = bob_client.get(reverse("projects:detail", args=[project.pk]))
    assert response.status_code == 200
    text = response.content.decode()
    for absent in ("Add member", "Make invitation link", "Open invitations", "Remove",
                   'name="role"', "Rename", "Delete project",
                   reverse("projects:member_add", args=[project.pk]),
                   reverse("projects:invitation_create", args=[project.pk])):
        assert absent not in text, absent
    assert "Leave project" in text  # anyone may leave


def test_a_viewers_forged_posts_are_403_with_the_role_needed(bob_client, user, other_user,
                                                             project) -> None:
    services.invitation_create(user=user, project=project, role="reviewer", anyone=True)
    invitation = Invitation.objects.get()
    forged = {
        reverse("projects:member_add", args=[project.pk]): {"identifier": "bob",
                                                            "role": "owner"},
        reverse("projects:member_role", args=[project.pk, other_user.pk]): {"role": "owner"},
        reverse("projects:member_remove", args=[project.pk, user.pk]): {},
        reverse("projects:invitation_create", args=[project.pk]): {"role": "owner"},
        reverse("projects:invitation_revoke", args=[project.pk, invitation.pk]): {},
        reverse("projects:rename", args=[project.pk]): {"name": "Mine now"},
        reverse("projects:delete", args=[project.pk]): {},
    }
    for url, data in forged.items():
        response = bob_client.post(url, data)
        assert response.status_code == 403, url
        text = response.content.decode()
        assert "needs the owner role in this project; you are a viewer." in text, url
    project.refresh_from_db()
    assert project.name == "Cardiology reviews"
    assert Membership.objects.get(project=project, user=other_user).role == "viewer"
    assert Membership.objects.filter(project=project, user=user).exists()
    assert Invitation.objects.count() == 1
    assert Invitation.objects.get().revoked_at is None


def test_a_non_member_is_answered_404_on_every_project_url(alice_client, other_user) -> None:
    bobs = services.project_create(user=other_user, name="Bob's secret project")
    for name, args in (("detail", [bobs.pk]), ("rename", [bobs.pk]), ("delete", [bobs.pk]),
                       ("leave", [bobs.pk]), ("member_add", [bobs.pk]),
                       ("member_role", [bobs.pk, other_user.pk]),
                       ("member_remove", [bobs.pk, other_user.pk]),
                       ("invitation_create", [bobs.pk])):
        method = alice_client.get if name == "detail" else alice_client.post
        response = method(reverse(f"projects:{name}", args=args), {"name": "x", "role": "owner"})
        assert response.status_code == 404, name
        assert b"secret" not in response.content
    assert Project.objects.get(pk=bobs.pk).name == "Bob's secret project"
