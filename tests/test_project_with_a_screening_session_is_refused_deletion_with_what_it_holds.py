"""Deleting a project lists every kind of row that still holds it, screening sessions included.

A screening session protects its project; the deletion used to reach the database and answer
a 500 (ProtectedError). It is now refused with the count, like datasets and models.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from projects import services as project_services
from projects.services import ProjectError
from screening import services as screening_services
from tests.screening_support import team_make

pytestmark = pytest.mark.django_db


def test_a_project_with_a_screening_session_is_refused_deletion_with_what_it_holds(
    user: Any, media_root: Path, client: Any,
) -> None:
    team = team_make(user)
    screening_services.session_create(user=team.maintainer, dataset=team.dataset, name="Onc",
                                      labels=["oncological"], ranker_every=100)
    with pytest.raises(ProjectError, match=r"still holds 1 datasets, 1 screening sessions"):
        project_services.project_delete(user=user, project=team.project)
    assert project_services.project_holdings(project=team.project) == {
        "datasets": 1, "screening sessions": 1}

    client.force_login(user)
    answer = client.delete(f"/api/projects/{team.project.pk}/")
    assert answer.status_code in (400, 409), answer.content
    assert "screening sessions" in answer.json()["detail"]
