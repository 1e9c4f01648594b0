"""A screening page of a project other than the one a person works in (opened from a link, say)
names its own project in the header's switcher, and the buttons follow the person's role there;
the page does not move them: their lists stay in the project they work in."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from projects.middleware import SESSION_KEY
from screening import services
from screening.models import SimulationRun
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db
SHOWN = re.compile(r'<span class="project-switcher-name">([^<]*)</span>')
PAGE_LINK = re.compile(r'<a href="/projects/(\d+)/">Project page</a>')
CURRENT = re.compile(r'value="(\d+)" class="project-menu-item current" aria-current="true"')


def _header(html: str) -> tuple[str, str]:
    return SHOWN.search(html).group(1), PAGE_LINK.search(html).group(1)


def test_session_screen_and_simulation_pages_name_their_own_project(team) -> None:  # noqa: F811
    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="Onc",
                                      labels=["oncological"])
    run = SimulationRun.objects.create(dataset=team.dataset, label="oncological")
    client = Client()
    client.force_login(team.maintainer)
    # Mona works in her personal project, not in the team's.
    elsewhere = client.get(reverse("screening:list")).content.decode()
    personal_name, personal_pk = _header(elsewhere)
    assert personal_name != "Screening team"
    team_pk = str(team.project.pk)
    for url in (reverse("screening:detail", args=[session.pk]),
                reverse("screening:screen", args=[session.pk]),
                reverse("screening:simulation", args=[run.pk])):
        page = client.get(url).content.decode()
        assert _header(page) == ("Screening team", team_pk), url
        assert CURRENT.search(page).group(1) == team_pk, url
    detail = client.get(reverse("screening:detail", args=[session.pk])).content.decode()
    assert 'id="stop"' in detail  # her maintainer role in the team's project
    assert SESSION_KEY not in client.session or client.session[SESSION_KEY] != team.project.pk
    assert _header(client.get(reverse("screening:list")).content.decode()) == (
        personal_name, personal_pk)
