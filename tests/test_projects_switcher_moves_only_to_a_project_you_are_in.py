"""The header's project switcher: it names the project you work in, lists yours, and moves you
only to a project you are a member of (another one is 404, and nothing changes)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from projects import services
from projects.middleware import SESSION_KEY

pytestmark = pytest.mark.django_db


def test_the_header_names_the_current_project_and_lists_mine(alice_client, user) -> None:
    shared = services.project_create(user=user, name="Cardiology reviews")
    page = alice_client.get(reverse("datasets:list")).content.decode()
    assert "alice&#x27;s project" in page  # the personal project, until another is chosen
    assert "Cardiology reviews" in page
    assert f'name="project" value="{shared.pk}"' in page
    assert reverse("projects:create") in page


def test_switching_stores_the_project_and_goes_back_where_i_was(alice_client, user) -> None:
    shared = services.project_create(user=user, name="Cardiology reviews")
    response = alice_client.post(reverse("projects:switch"),
                                 {"project": shared.pk, "next": "/datasets/?page=2"})
    assert response.status_code == 302
    assert response["Location"] == "/datasets/?page=2"
    assert alice_client.session[SESSION_KEY] == shared.pk
    page = alice_client.get(reverse("projects:list")).content.decode()
    assert "working in it" in page


def test_an_outside_next_is_replaced_by_the_dashboard(alice_client, user) -> None:
    shared = services.project_create(user=user, name="Cardiology reviews")
    response = alice_client.post(reverse("projects:switch"),
                                 {"project": shared.pk, "next": "https://evil.example/"})
    assert response["Location"] == reverse("dashboard")


def test_switching_to_a_project_i_am_not_in_is_404(alice_client, user, other_user) -> None:
    bobs = services.project_create(user=other_user, name="Bob's secret project")
    response = alice_client.post(reverse("projects:switch"), {"project": bobs.pk, "next": "/"})
    assert response.status_code == 404
    assert b"secret" not in response.content
    assert SESSION_KEY not in alice_client.session
    assert alice_client.get(reverse("projects:detail", args=[bobs.pk])).status_code == 404


def test_switching_is_a_post_with_a_csrf_token(user) -> None:
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    project = services.project_create(user=user, name="Cardiology reviews")
    assert client.get(reverse("projects:switch")).status_code == 405
    assert client.post(reverse("projects:switch"), {"project": project.pk}).status_code == 403
    assert SESSION_KEY not in client.session


def test_a_new_project_is_made_from_its_form_and_worked_in_at_once(alice_client) -> None:
    from projects.models import Membership, Project

    response = alice_client.post(reverse("projects:create"), {"name": "  Oncology  "})
    project = Project.objects.get(name="Oncology")
    assert response["Location"] == reverse("projects:detail", args=[project.pk])
    assert Membership.objects.get(project=project).role == "owner"
    assert alice_client.session[SESSION_KEY] == project.pk
    assert alice_client.post(reverse("projects:create"), {"name": " "}).status_code == 400
