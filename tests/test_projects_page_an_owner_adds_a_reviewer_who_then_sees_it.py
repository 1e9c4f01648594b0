"""An owner adds a colleague by username or e-mail with a role; the colleague then sees the
project's page with its counts, members and activity, and the owner can change or remove them."""

from __future__ import annotations

import pytest
from django.urls import reverse

from projects import services
from projects.models import Membership

pytestmark = pytest.mark.django_db


@pytest.fixture
def project(user):
    return services.project_create(user=user, name="Cardiology reviews")


def test_an_owner_adds_a_reviewer_who_then_sees_the_project(alice_client, bob_client, user,
                                                           other_user, project, rows) -> None:
    url = reverse("projects:detail", args=[project.pk])
    assert bob_client.get(url).status_code == 404
    rows.dataset(user, name="Shared set", project=project)

    response = alice_client.post(reverse("projects:member_add", args=[project.pk]),
                                 {"identifier": "BOB@example.org", "role": "reviewer"},
                                 follow=True)
    assert "bob is now reviewer of this project." in response.content.decode()
    assert Membership.objects.get(project=project, user=other_user).role == "reviewer"

    page = bob_client.get(url)
    assert page.status_code == 200
    text = page.content.decode()
    assert "Cardiology reviews" in text
    assert page.context["counts"] == {"datasets": 1, "models": 0, "batches": 0, "members": 2}
    assert "alice added bob as reviewer" in text  # the activity log, newest first
    assert "Leave project" in text
    # A reviewer manages nobody: the owner's controls are absent.
    assert reverse("projects:member_add", args=[project.pk]) not in text
    assert "Make invitation link" not in text


def test_an_owner_changes_a_role_and_removes_a_member(alice_client, other_user, user,
                                                      project) -> None:
    services.member_add(user=user, project=project, identifier="bob", role="viewer")
    alice_client.post(reverse("projects:member_role", args=[project.pk, other_user.pk]),
                      {"role": "maintainer"})
    assert Membership.objects.get(project=project, user=other_user).role == "maintainer"
    alice_client.post(reverse("projects:member_remove", args=[project.pk, other_user.pk]))
    assert not Membership.objects.filter(project=project, user=other_user).exists()
    text = alice_client.get(reverse("projects:detail", args=[project.pk])).content.decode()
    assert "alice removed bob" in text


def test_an_unknown_user_is_a_message_not_an_error(alice_client, project) -> None:
    response = alice_client.post(reverse("projects:member_add", args=[project.pk]),
                                 {"identifier": "carol", "role": "viewer"}, follow=True)
    assert response.status_code == 200
    assert "No user is called “carol”. Invite them with a link instead." in \
        response.content.decode()


def test_the_project_list_shows_my_role_and_the_member_count(bob_client, user,
                                                             project) -> None:
    services.member_add(user=user, project=project, identifier="bob", role="viewer")
    rows = {p.name: p for p in bob_client.get(reverse("projects:list")).context["projects"]}
    assert rows["Cardiology reviews"].my_role == "viewer"
    assert rows["Cardiology reviews"].member_count == 2
    assert rows["bob's project"].my_role == "owner"


def test_activity_is_paged_fifty_to_a_page_newest_first(alice_client, user, project) -> None:
    for n in range(60):
        services.activity_record(project=project, actor=None, verb="note", summary=f"note {n}")
    first = alice_client.get(reverse("projects:detail", args=[project.pk]))
    shown = [a.summary for a in first.context["page"].object_list]
    assert len(shown) == 50
    assert shown[0] == "note 59"
    assert "system" in first.content.decode()
    second = alice_client.get(reverse("projects:detail", args=[project.pk]) + "?page=2")
    assert [a.summary for a in second.context["page"].object_list][-1].startswith("alice created")
