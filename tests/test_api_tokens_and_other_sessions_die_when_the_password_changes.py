"""Tokens die with the password: after a password change (on the page, by a reset link, or set
by an administrator or `changepassword`) the user's old API tokens answer 401 and their other
browser sessions are signed out, while the page that changed it stays signed in; the user's log
says what was revoked. The tokens page lists the user's sessions, and ends any one of them."""

from __future__ import annotations

import re

import pytest
from django.core import mail
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from api.models import ApiToken
from api.tokens import token_create
from projects.models import Activity

pytestmark = pytest.mark.django_db

PASSWORD = "alice-pass-123"
NEW_PASSWORD = "A-new-and-long-passphrase-7"


def api_status(key: str) -> int:
    return APIClient().get("/api/datasets/", HTTP_AUTHORIZATION=f"Token {key}").status_code


def signed_in(client: Client) -> bool:
    return client.get(reverse("account_tokens")).status_code == 200


def browser(user, address: str, password: str = PASSWORD) -> Client:
    client = Client(REMOTE_ADDR=address, HTTP_USER_AGENT=f"Browser at {address}")
    answer = client.post(reverse("login"), {"username": user.username, "password": password})
    assert answer.status_code == 302
    return client


def test_a_password_changed_on_its_page_revokes_tokens_and_other_sessions(user) -> None:
    _, key = token_create(user=user, name="lab server")
    here, elsewhere = browser(user, "10.0.0.1"), browser(user, "10.0.0.2")
    assert api_status(key) == 200
    response = here.post("/accounts/password_change/", {
        "old_password": PASSWORD, "new_password1": NEW_PASSWORD,
        "new_password2": NEW_PASSWORD})
    assert response.status_code == 302, response.content.decode()[:500]
    assert api_status(key) == 401
    assert "was revoked on" in APIClient().get(
        "/api/datasets/", HTTP_AUTHORIZATION=f"Token {key}").json()["detail"]
    assert signed_in(here)
    assert not signed_in(elsewhere)
    line = Activity.objects.filter(verb="tokens_revoked").get().summary
    assert line.startswith("Password changed: alice revoked 1 API token of alice and ended ")


def test_a_password_reset_by_link_revokes_tokens(client, user, settings) -> None:
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    _, key = token_create(user=user, name="laptop")
    client.post("/accounts/password_reset/", {"email": user.email})
    link = re.search(r"http://testserver(/accounts/reset/\S+/)", mail.outbox[0].body).group(1)
    form = client.get(link, follow=True)
    client.post(form.redirect_chain[-1][0], {"new_password1": NEW_PASSWORD,
                                             "new_password2": NEW_PASSWORD})
    user.refresh_from_db()
    assert user.check_password(NEW_PASSWORD)
    assert api_status(key) == 401


def test_a_password_set_by_an_administrator_revokes_tokens_and_sessions(user) -> None:
    _, key = token_create(user=user, name="script")
    session = browser(user, "10.0.0.3")
    user.set_password(NEW_PASSWORD)  # what the admin's form and `changepassword` do
    user.save()
    assert api_status(key) == 401
    assert not signed_in(session)
    assert ApiToken.objects.get().state == "revoked"


def test_a_login_does_not_revoke_anything(user) -> None:
    _, key = token_create(user=user, name="script")
    browser(user, "10.0.0.4")
    assert api_status(key) == 200
    assert not Activity.objects.filter(verb="tokens_revoked").exists()


def test_the_tokens_page_lists_sessions_and_ends_another(user, other_user) -> None:
    here, elsewhere = browser(user, "10.0.0.5"), browser(user, "10.0.0.6")
    browser(other_user, "10.0.0.7", "bob-pass-123")  # bob's session is not alice's to see
    page = here.get(reverse("account_tokens"))
    sessions = page.context["sessions"]
    assert sorted(s.address for s in sessions) == ["10.0.0.5", "10.0.0.6"]
    assert "this browser" in page.content.decode()
    other = next(s for s in sessions if s.address == "10.0.0.6")
    assert here.post(reverse("account_session_end", args=[other.pk])).status_code == 302
    assert not signed_in(elsewhere)
    assert signed_in(here)
    theirs = Client()
    theirs.force_login(other_user)
    assert theirs.post(reverse("account_session_end", args=[other.pk])).status_code == 404


def test_an_owner_revokes_a_members_tokens_and_a_viewer_may_not(user, other_user) -> None:
    from projects import services as projects

    project = projects.project_create(user=user, name="Shared")
    projects.member_set(actor=user, project=project, member=other_user, role="viewer")
    _, bobs_key = token_create(user=other_user, name="bob's laptop")
    _, alices_key = token_create(user=user, name="alice's script")
    bob = browser(other_user, "10.0.0.8", "bob-pass-123")
    alice = browser(user, "10.0.0.9")
    forged = bob.post(reverse("project_member_tokens_revoke", args=[project.pk, user.pk]))
    assert forged.status_code == 403
    assert api_status(alices_key) == 200
    page = alice.get(reverse("projects:detail", args=[project.pk])).content.decode()
    assert "Revoke tokens" in page
    answer = alice.post(reverse("project_member_tokens_revoke", args=[project.pk, other_user.pk]))
    assert answer.status_code == 302
    assert api_status(bobs_key) == 401
    assert not signed_in(bob)
    assert signed_in(alice)
    assert api_status(alices_key) == 200
    assert Activity.objects.filter(project=project, verb="member_tokens_revoked").get().summary \
        == ("Asked by an owner of “Shared”: alice revoked 1 API token of bob and ended "
            "1 session")
    outsider = projects.project_create(user=other_user, name="Bob's own")
    assert alice.post(reverse("project_member_tokens_revoke",
                              args=[outsider.pk, other_user.pk])).status_code == 404


def test_a_first_password_on_a_new_account_writes_no_log_line(db) -> None:
    from django.contrib.auth import get_user_model

    carol = get_user_model().objects.create(username="carol", email="carol@example.org")
    carol.set_password("Carol-first-password-1")
    carol.save(update_fields=["password"])  # what setup_demo does for its new user
    assert not Activity.objects.filter(verb="tokens_revoked").exists()
