"""Shared set-up for the screening tests: a project with a team and a small labelled dataset."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.files import File

from dataset_management.services import dataset_create_from_upload
from projects import services as project_services

FORMATS = Path(__file__).resolve().parent / "fixtures" / "formats"


@dataclass
class Team:
    project: Any
    owner: Any
    maintainer: Any
    reviewer: Any
    reviewer2: Any
    viewer: Any
    dataset: Any


def team_make(owner: Any) -> Team:
    project = project_services.project_create(user=owner, name="Screening team")
    people = {}
    for role, name in [("maintainer", "mona"), ("reviewer", "rita"), ("reviewer", "remy"),
                       ("viewer", "vera")]:
        person = get_user_model().objects.create_user(name, f"{name}@example.org", "pw-123456")
        project_services.member_set(actor=owner, project=project, member=person, role=role)
        people[name] = person
    with (FORMATS / "comma.csv").open("rb") as handle:
        dataset = dataset_create_from_upload(owner=owner, project=project, name="Small",
                                             uploaded_file=File(handle, name="comma.csv"))
    return Team(project=project, owner=owner, maintainer=people["mona"],
                reviewer=people["rita"], reviewer2=people["remy"], viewer=people["vera"],
                dataset=dataset)


@pytest.fixture
def team(user: Any, media_root: Path) -> Team:
    return team_make(user)


def trained_model_make(team: Team, artifact: dict[str, Any], name: str = "Starting TF-IDF") -> Any:
    """A trained TF-IDF model in the team's project (tests.plugins.browser's tfidf_artifact: a
    real model fitted on the demo slice, whose labels include oncological)."""
    from classification.models import MLModel

    return MLModel.objects.create(
        owner=team.owner, project=team.project, dataset=team.dataset, name=name,
        model_type="tfidf_logreg", status=MLModel.Status.TRAINED,
        artifact_path=artifact["path"], label_names=artifact["labels"])
