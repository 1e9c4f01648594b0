"""train_model, predict and evaluate take --project (the dataset or model must be in it) and
--owner (the person it runs as, who needs the role the page would ask for): each refusal is one
line naming what is wrong, and the output of a command that runs keeps its format."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from classification.models import MLModel
from projects.models import Activity, Role
from projects.services import member_set, project_create, project_personal
from tests.job_support import FIXTURES

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(user) -> dict[str, Any]:
    users = get_user_model().objects
    rita = users.create_user("rita", "rita@example.org", "rita-pass-123")
    mona = users.create_user("mona", "mona@example.org", "mona-pass-123")
    project = project_personal(user=user)
    member_set(actor=user, project=project, member=rita, role=Role.REVIEWER)
    member_set(actor=user, project=project, member=mona, role=Role.MAINTAINER)
    return {"project": project, "rita": rita, "mona": mona}


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_train_model_trains_in_the_datasets_project_as_a_maintainer_owner(
        people, user, rows) -> None:
    dataset = rows.dataset(user)
    project = people["project"]
    out = run("train_model", "--dataset", str(dataset.pk), "--type", "tfidf_logreg",
              "--project", str(project.pk), "--owner", "mona")
    assert out.startswith("Queued job ")
    model = MLModel.objects.get(pk=int(out.strip().splitlines()[-1].removeprefix("model_id=")))
    assert (model.project_id, model.owner.username) == (project.pk, "mona")
    assert Activity.objects.get(verb="training_started").actor.username == "mona"


def test_train_model_refuses_another_project_an_unknown_user_and_a_role_below_maintainer(
        people, user, rows) -> None:
    dataset = rows.dataset(user)
    elsewhere = project_create(user=user, name="Elsewhere")
    base = ["train_model", "--dataset", str(dataset.pk), "--type", "tfidf_logreg"]
    refusals = {
        (*base, "--project", str(elsewhere.pk)):
            f"Dataset {dataset.pk} is not in project {elsewhere.pk}: it is in project "
            f"{people['project'].pk}.",
        (*base, "--project", "999999"): "No project 999999.",
        (*base, "--owner", "nobody"): "No user named 'nobody'.",
        (*base, "--owner", "rita"):
            f"rita may not do this in project {people['project'].pk} "
            f"(“{people['project'].name}”): Training needs the maintainer role in this "
            "project; you are a reviewer.",
    }
    for args, message in refusals.items():
        with pytest.raises(CommandError) as refused:
            run(*args)
        assert str(refused.value) == message
    assert not MLModel.objects.exists()


def test_predict_and_evaluate_check_the_models_project_and_the_owners_role(
        people, user, trained_model, tmp_path) -> None:
    project, model = people["project"], str(trained_model.pk)
    victor = get_user_model().objects.create_user("victor", "v@example.org", "victor-pass-1")
    member_set(actor=user, project=project, member=victor, role=Role.VIEWER)
    answer = json.loads(run("predict", model, "--text", "heart failure", "--project",
                            str(project.pk), "--owner", "rita"))
    assert set(answer["probabilities"]) == set(trained_model.label_names)
    summary = run("evaluate", model, str(FIXTURES / "demo_slice.csv"), "--project",
                  str(project.pk), "--owner", "rita").strip().splitlines()[-1]
    assert "micro_f1" in json.loads(summary)

    elsewhere = project_create(user=user, name="Elsewhere")
    for command in (["predict", model, "--text", "x"],
                    ["evaluate", model, str(FIXTURES / "demo_slice.csv")]):
        with pytest.raises(CommandError, match=f"Model {model} is not in project "):
            run(*command, "--project", str(elsewhere.pk))
        with pytest.raises(CommandError, match="Classifying needs the reviewer role in this "
                                               "project; you are a viewer"):
            run(*command, "--owner", "victor")
