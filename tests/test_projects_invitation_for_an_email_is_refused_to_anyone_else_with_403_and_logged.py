"""An invitation made for an e-mail is accepted only by a user with that e-mail: another
signed-in user (an owner invitation meant for someoneelse@x.test, in the probe) gets 403 with a
sentence, stays out of the project, and the attempt is in the project's activity log; so does a
visitor signing up under another address. A link with no address is the owner's explicit
choice, gives at most the reviewer role, and expires; an older link above reviewer is refused."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils import timezone

from projects import services
from projects.models import Activity, Invitation, Membership
from projects.services import ProjectError

pytestmark = pytest.mark.django_db

NOT_YOURS = ("This invitation was made for another e-mail address: only its invitee can "
             "accept it. Ask the project&#x27;s owner for your own.")


@pytest.fixture
def project(user):
    return services.project_create(user=user, name="Oncology reviews")


def refused_lines(project) -> list[str]:
    return list(Activity.objects.filter(project=project, verb="invitation_refused")
                .values_list("summary", flat=True))


def test_another_signed_in_user_cannot_accept_an_owner_invitation_meant_for_someone_else(
        bob_client, alice_client, other_user, user, project) -> None:
    _, key = services.invitation_create(user=user, project=project, role="owner",
                                        email="someoneelse@x.test")
    url = reverse("projects:invitation", args=[key])
    page = bob_client.get(url)
    assert page.status_code == 403
    assert NOT_YOURS in page.content.decode()
    response = bob_client.post(url)
    assert response.status_code == 403
    assert NOT_YOURS in response.content.decode()
    assert not Membership.objects.filter(project=project, user=other_user).exists()
    assert Invitation.objects.get().accepted_at is None  # still there for its invitee
    assert refused_lines(project) == [
        "bob tried to accept an invitation as owner made for someoneelse@x.test; refused"]
    with pytest.raises(services.InvitationNotYours):
        services.invitation_accept(user=other_user, key=key)
    owners_page = alice_client.get(reverse("projects:detail", args=[project.pk]))
    assert "bob tried to accept an invitation as owner made for someoneelse@x.test" in \
        owners_page.content.decode()


def test_the_invitee_accepts_it_whatever_the_case_of_the_address(bob_client, other_user, user,
                                                                  project) -> None:
    _, key = services.invitation_create(user=user, project=project, role="maintainer",
                                        email="Bob@Example.org")
    response = bob_client.post(reverse("projects:invitation", args=[key]))
    assert response.status_code == 302
    assert Membership.objects.get(project=project, user=other_user).role == "maintainer"
    assert refused_lines(project) == []


def test_a_visitor_signing_up_under_another_address_is_refused_and_no_account_is_made(
        client, user, project) -> None:
    _, key = services.invitation_create(user=user, project=project, role="reviewer",
                                        email="carol@example.org")
    response = client.post(reverse("projects:invitation", args=[key]), {
        "username": "mallory", "email": "mallory@example.org",
        "password1": "Mallory-is-4-guessing", "password2": "Mallory-is-4-guessing"})
    assert response.status_code == 403
    assert NOT_YOURS in response.content.decode()
    assert not get_user_model().objects.filter(username="mallory").exists()
    assert refused_lines(project) == [
        "mallory tried to accept an invitation as reviewer made for carol@example.org; "
        "refused"]


def test_a_link_without_an_address_must_be_chosen_and_gives_at_most_a_reviewer(
        alice_client, user, project) -> None:
    with pytest.raises(ProjectError, match="Give the e-mail of the person"):
        services.invitation_create(user=user, project=project, role="viewer")
    with pytest.raises(ProjectError, match="gives at most the reviewer role; to invite a "
                                           "maintainer, give their e-mail"):
        services.invitation_create(user=user, project=project, role="maintainer", anyone=True)
    url = reverse("projects:invitation_create", args=[project.pk])
    page = alice_client.post(url, {"role": "owner", "anyone": "on"}, follow=True)
    assert "gives at most the reviewer role" in page.content.decode()
    alice_client.post(url, {"role": "viewer"})  # neither an e-mail nor the choice
    assert not Invitation.objects.exists()
    made = alice_client.post(url, {"role": "reviewer", "anyone": "on"})
    assert made.status_code == 201
    invitation = Invitation.objects.get()
    assert (invitation.email, invitation.role) == ("", "reviewer")
    assert invitation.expires_at <= timezone.now() + timedelta(days=7, minutes=1)


def test_an_anyone_link_works_for_whoever_opens_it_until_it_expires(bob_client, other_user,
                                                                    user, project) -> None:
    _, key = services.invitation_create(user=user, project=project, role="reviewer",
                                        anyone=True)
    assert bob_client.post(reverse("projects:invitation", args=[key])).status_code == 302
    assert Membership.objects.get(project=project, user=other_user).role == "reviewer"
    _, late = services.invitation_create(user=user, project=project, role="viewer", anyone=True)
    Invitation.objects.filter(accepted_at=None).update(
        expires_at=timezone.now() - timedelta(seconds=1))
    assert bob_client.get(reverse("projects:invitation", args=[late])).status_code == 410


def test_an_older_link_for_anyone_above_reviewer_is_refused(bob_client, other_user, user,
                                                            project) -> None:
    invitation, key = services.invitation_create(user=user, project=project, role="reviewer",
                                                 anyone=True)
    Invitation.objects.filter(pk=invitation.pk).update(role="owner")  # made before the cap
    response = bob_client.post(reverse("projects:invitation", args=[key]))
    assert response.status_code == 403
    assert "gives more than a reviewer" in response.content.decode()
    assert not Membership.objects.filter(project=project, user=other_user).exists()
    assert refused_lines(project) == [
        "bob tried to accept an invitation as owner made before links were bound; refused"]
