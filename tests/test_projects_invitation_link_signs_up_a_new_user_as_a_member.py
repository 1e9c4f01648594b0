"""An invitation link: its owner sees it once; a visitor signs up through it and is a member,
signed in; a signed-in user joins with one button; an expired, used or withdrawn link is refused
with the sentence saying why."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from projects import services
from projects.middleware import SESSION_KEY
from projects.models import Invitation, Membership

pytestmark = pytest.mark.django_db

NEW_PERSON = {"username": "carol", "email": "carol@example.org",
              "password1": "Carol-is-4-reviewing", "password2": "Carol-is-4-reviewing"}


@pytest.fixture
def project(user):
    return services.project_create(user=user, name="Cardiology reviews")


def test_the_owner_sees_the_link_once_and_never_again(alice_client, project) -> None:
    response = alice_client.post(reverse("projects:invitation_create", args=[project.pk]),
                                 {"role": "reviewer", "email": "carol@example.org"})
    assert response.status_code == 201
    link = response.context["link"]
    assert link.startswith("http://testserver/invite/")
    assert link in response.content.decode()
    key = link.rstrip("/").rsplit("/", 1)[1]
    assert key not in str(list(Invitation.objects.values()))  # only its hash is kept

    page = alice_client.get(reverse("projects:detail", args=[project.pk])).content.decode()
    assert "carol@example.org" in page
    assert "Revoke" in page
    assert key not in page


def test_a_visitor_signs_up_through_the_link_and_is_a_member(client, user, project) -> None:
    _, key = services.invitation_create(user=user, project=project, role="reviewer",
                                        email="carol@example.org")
    url = reverse("projects:invitation", args=[key])
    page = client.get(url)
    assert page.status_code == 200
    text = page.content.decode()
    assert "Cardiology reviews" in text
    assert "reviewer" in text
    assert 'value="carol@example.org"' in text  # the e-mail it was meant for, filled in

    response = client.post(url, NEW_PERSON)
    assert response["Location"] == reverse("projects:detail", args=[project.pk])
    carol = get_user_model().objects.get(username="carol")
    assert carol.email == "carol@example.org"
    assert Membership.objects.get(project=project, user=carol).role == "reviewer"
    assert client.session[SESSION_KEY] == project.pk  # signed in, working in the project
    assert client.get(response["Location"]).status_code == 200
    # The link is spent: opened again, it says so.
    again = Client().get(url)
    assert again.status_code == 410
    assert "This invitation has already been used. Ask for a new one." in again.content.decode()


def test_a_bad_sign_up_keeps_the_link_and_makes_no_account(client, user, project) -> None:
    _, key = services.invitation_create(user=user, project=project, role="viewer",
                                        anyone=True)
    url = reverse("projects:invitation", args=[key])
    response = client.post(url, {**NEW_PERSON, "password2": "something else"})
    assert response.status_code == 400
    assert not get_user_model().objects.filter(username="carol").exists()
    taken = client.post(url, {**NEW_PERSON, "email": "ALICE@example.org"})
    assert "An account with this e-mail already exists" in taken.content.decode()
    assert Invitation.objects.get().accepted_at is None


def test_a_signed_in_user_joins_with_one_button(bob_client, other_user, user, project) -> None:
    _, key = services.invitation_create(user=user, project=project, role="maintainer",
                                        email="bob@example.org")
    url = reverse("projects:invitation", args=[key])
    page = bob_client.get(url).content.decode()
    assert "Join as bob" in page
    assert "password" not in page
    response = bob_client.post(url)
    assert response["Location"] == reverse("projects:detail", args=[project.pk])
    assert Membership.objects.get(project=project, user=other_user).role == "maintainer"


def test_an_expired_link_is_refused_with_its_sentence(client, user, project) -> None:
    _, key = services.invitation_create(user=user, project=project, role="reviewer",
                                        anyone=True)
    Invitation.objects.update(expires_at=timezone.now() - timedelta(minutes=1))
    url = reverse("projects:invitation", args=[key])
    for response in (client.get(url), client.post(url, NEW_PERSON)):
        assert response.status_code == 410
        assert "This invitation has expired. Ask for a new one." in response.content.decode()
    assert not get_user_model().objects.filter(username="carol").exists()


def test_a_withdrawn_or_unknown_link_is_refused(client, user, project) -> None:
    invitation, key = services.invitation_create(user=user, project=project, role="viewer",
                                        anyone=True)
    services.invitation_revoke(user=user, invitation=invitation)
    response = client.get(reverse("projects:invitation", args=[key]))
    assert response.status_code == 410
    assert "This invitation was withdrawn." in response.content.decode()
    unknown = client.get(reverse("projects:invitation", args=["no-such-key"]))
    assert unknown.status_code == 404
    assert "This invitation link is not valid." in unknown.content.decode()


def test_a_member_opening_a_link_that_gives_them_nothing_leaves_it_unspent(
        alice_client, user, project) -> None:
    _, key = services.invitation_create(user=user, project=project, role="reviewer",
                                        anyone=True)
    url = reverse("projects:invitation", args=[key])
    page = alice_client.get(url).content.decode()
    assert "You are already owner of this project" in page
    assert "Join as alice" not in page
    alice_client.post(url)
    assert Invitation.objects.get().accepted_at is None
    assert Membership.objects.get(project=project, user=user).role == "owner"
