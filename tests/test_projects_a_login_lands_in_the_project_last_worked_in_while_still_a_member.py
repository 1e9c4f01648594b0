"""Every login lands in the project the person last chose to work in (the switcher, a new
project, an accepted invitation), as long as they are still a member of it; otherwise in their
personal project. Logging in through the real form, in a fresh browser session each time."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from projects import services
from projects.middleware import SESSION_KEY

pytestmark = pytest.mark.django_db


def _log_in(username: str, password: str) -> Client:
    client = Client()
    response = client.post(reverse("login"), {"username": username, "password": password})
    assert response.status_code == 302, response.content.decode()[:500]
    return client


def test_a_login_lands_in_the_project_switched_to_last_time(user: Any) -> None:
    cardiology = services.project_create(user=user, name="Cardiology reviews")
    services.project_create(user=user, name="Oncology reviews")
    first = _log_in("alice", "alice-pass-123")
    assert SESSION_KEY not in first.session  # nothing chosen yet: the personal project
    first.post(reverse("projects:switch"), {"project": cardiology.pk, "next": "/"})
    first.post(reverse("logout"))

    again = _log_in("alice", "alice-pass-123")
    assert again.session[SESSION_KEY] == cardiology.pk
    assert again.get(reverse("projects:list")).wsgi_request.project.pk == cardiology.pk


def test_the_newest_choice_wins_and_a_new_project_counts_as_one(user: Any) -> None:
    cardiology = services.project_create(user=user, name="Cardiology reviews")
    client = _log_in("alice", "alice-pass-123")
    client.post(reverse("projects:switch"), {"project": cardiology.pk, "next": "/"})
    client.post(reverse("projects:create"), {"name": "Oncology reviews"})
    client.post(reverse("logout"))
    again = _log_in("alice", "alice-pass-123")
    project = again.get(reverse("dashboard")).wsgi_request.project
    assert project.name == "Oncology reviews"


def test_a_member_no_longer_lands_in_a_project_they_were_removed_from(
    user: Any, other_user: Any,
) -> None:
    shared = services.project_create(user=user, name="Shared review")
    services.member_add(user=user, project=shared, identifier="bob", role="reviewer")
    bob = _log_in("bob", "bob-pass-123")
    bob.post(reverse("projects:switch"), {"project": shared.pk, "next": "/"})
    bob.post(reverse("logout"))
    services.member_remove(user=user, project=shared, member=other_user)

    again = _log_in("bob", "bob-pass-123")
    assert SESSION_KEY not in again.session
    project = again.get(reverse("dashboard")).wsgi_request.project
    assert project.personal_for_id == other_user.pk
    assert b"Shared review" not in again.get(reverse("dashboard")).content


def test_a_deleted_project_sends_the_next_login_to_the_personal_project(user: Any) -> None:
    doomed = services.project_create(user=user, name="Short-lived")
    client = _log_in("alice", "alice-pass-123")
    client.post(reverse("projects:switch"), {"project": doomed.pk, "next": "/"})
    client.post(reverse("logout"))
    services.project_delete(user=user, project=doomed)

    again = _log_in("alice", "alice-pass-123")
    assert SESSION_KEY not in again.session
    assert again.get(reverse("dashboard")).wsgi_request.project.personal_for_id == user.pk


def test_a_refused_switch_remembers_nothing(user: Any, other_user: Any) -> None:
    bobs = services.project_create(user=other_user, name="Bob's secret project")
    client = _log_in("alice", "alice-pass-123")
    assert client.post(reverse("projects:switch"),
                       {"project": bobs.pk, "next": "/"}).status_code == 404
    client.post(reverse("logout"))
    again = _log_in("alice", "alice-pass-123")
    assert SESSION_KEY not in again.session
