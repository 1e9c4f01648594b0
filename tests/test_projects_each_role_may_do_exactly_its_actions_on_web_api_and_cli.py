"""The role matrix: every role × every action, through the pages, the API and the CLI.

A role may do what its rank allows (viewer < reviewer < maintainer < owner) and is refused
otherwise: 403 with a sentence naming the role needed on the web and the API, a one-line error
at the command line. The same world is rebuilt for each case, so a delete never hides the next.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client
from rest_framework.test import APIClient

from api.tokens import token_create
from classification.models import MLModel, TrainingJob
from classification.review.services import review_items_ensure
from projects import services as project_services
from projects.models import Membership
from tests.batch_support import DEMO_SLICE, completed_batch

ROLES = ("viewer", "reviewer", "maintainer", "owner")
RANK = {role: i for i, role in enumerate(ROLES)}
# The least role each action needs: the contract the issue states.
NEEDS = {"view": "viewer", "download": "viewer", "classify": "reviewer", "review": "reviewer",
         "train": "maintainer", "cancel": "maintainer", "delete": "maintainer",
         "manage_members": "owner"}


@dataclass
class World:
    project: Any
    users: dict[str, Any]
    dataset: Any
    model: Any
    spare_model: Any
    batch: Any
    job: Any
    newcomer: Any


@pytest.fixture
def world(user: Any, rows: Any, tfidf_artifact: dict[str, Any], media_root: Any) -> World:
    project = project_services.project_create(user=user, name="Cardiology review")
    users = {"owner": user}
    for role in ROLES[:-1]:
        users[role] = get_user_model().objects.create_user(role, f"{role}@example.org", "pw-123456")
        project_services.member_set(actor=user, project=project, member=users[role], role=role)
    labels = tfidf_artifact["labels"]
    dataset = rows.dataset(user, project=project, label_names=labels)
    model = rows.model(user, dataset, project=project, artifact_path=tfidf_artifact["path"],
                       label_names=labels, metrics=tfidf_artifact["metrics"])
    spare = rows.model(user, dataset, project=project, name="Spare", status="pending")
    batch = completed_batch(user, model, [(1, "Heart failure", labels[0], *[0.9] * len(labels)),
                                          (2, "Stroke", labels[-1], *[0.2] * len(labels))],
                            labels)
    review_items_ensure(batch=batch)
    job = rows.job(rows.model(user, dataset, project=project, name="Queued"),
                   status=TrainingJob.Status.QUEUED)
    newcomer = get_user_model().objects.create_user("newcomer", "new@example.org", "pw-123456")
    return World(project, users, dataset, model, spare, batch, job, newcomer)


def _web(world: World, role: str) -> Client:
    client = Client()
    client.force_login(world.users[role])
    client.post("/projects/switch/", {"project": world.project.pk})
    return client


def _api(world: World, role: str) -> APIClient:
    client = APIClient()
    _, key = token_create(user=world.users[role], name="matrix")
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


WEB: dict[str, Callable[[Client, World], Any]] = {
    "view": lambda c, w: c.get(f"/models/{w.model.pk}/"),
    "download": lambda c, w: c.get(f"/classify/batches/{w.batch.pk.hex}/download/"),
    "classify": lambda c, w: c.post("/classify/", {"model": w.model.pk, "title": "Heart failure",
                                                   "abstract": "Ejection fraction fell."}),
    "review": lambda c, w: c.post(f"/classify/batches/{w.batch.pk.hex}/review/1/",
                                  {"labels": [w.model.label_names[0]]}),
    "train": lambda c, w: c.post("/models/new/", {"dataset": w.dataset.pk,
                                                  "model_type": "tfidf_svm", "preset": "quick"}),
    "cancel": lambda c, w: c.post(f"/jobs/{w.job.pk}/cancel/"),
    "delete": lambda c, w: c.post(f"/models/{w.spare_model.pk}/delete/"),
    "manage_members": lambda c, w: c.post(f"/projects/{w.project.pk}/members/",
                                          {"identifier": "newcomer", "role": "viewer"}),
}

API: dict[str, Callable[[APIClient, World], Any]] = {
    "view": lambda c, w: c.get(f"/api/models/{w.model.pk}/"),
    "download": lambda c, w: c.get(f"/api/batches/{w.batch.pk.hex}/result/"),
    "classify": lambda c, w: c.post(f"/api/models/{w.model.pk}/predict/",
                                    {"text": "Heart failure and ejection fraction"},
                                    format="json"),
    "review": lambda c, w: c.post(f"/api/batches/{w.batch.pk.hex}/review/1/",
                                  {"labels": [w.model.label_names[0]]}),
    "train": lambda c, w: c.post("/api/jobs/", {"dataset": w.dataset.pk,
                                                "model_type": "tfidf_svm"}, format="json"),
    "cancel": lambda c, w: c.post(f"/api/jobs/{w.job.pk}/cancel/"),
    "delete": lambda c, w: c.delete(f"/api/models/{w.spare_model.pk}/"),
    "manage_members": lambda c, w: c.post(f"/api/projects/{w.project.pk}/members/",
                                          {"username": "newcomer", "role": "viewer"},
                                          format="json"),
}

# What an allowed action leaves behind, so "allowed" means it happened, not only "not 403".
DONE: dict[str, Callable[[World], bool]] = {
    "train": lambda w: MLModel.objects.filter(project=w.project, model_type="tfidf_svm").exists(),
    "cancel": lambda w: TrainingJob.objects.get(pk=w.job.pk).status == "cancelled",
    "delete": lambda w: not MLModel.objects.filter(pk=w.spare_model.pk).exists(),
    "manage_members": lambda w: Membership.objects.filter(project=w.project,
                                                          user=w.newcomer).exists(),
    "review": lambda w: w.batch.review_items.filter(row=1).exclude(reviewed_labels=None).exists(),
}

CASES = [(door, action, role) for door in ("web", "api") for action in NEEDS for role in ROLES]


@pytest.mark.parametrize(("door", "action", "role"), CASES,
                         ids=[f"{d}-{a}-{r}" for d, a, r in CASES])
def test_a_role_may_do_an_action_only_when_its_rank_allows(world: World, door: str,
                                                           action: str, role: str) -> None:
    client = _web(world, role) if door == "web" else _api(world, role)
    response = (WEB if door == "web" else API)[action](client, world)
    allowed = RANK[role] >= RANK[NEEDS[action]]
    if allowed:
        assert response.status_code < 400, (response.status_code, response.content[:300])
        assert DONE.get(action, lambda _: True)(world), f"{action} answered but did nothing"
    else:
        assert response.status_code == 403, (response.status_code, response.content[:300])
        assert f"needs the {NEEDS[action]} role" in response.content.decode()
        assert not DONE.get(action, lambda _: False)(world), f"{action} refused yet happened"


def _cli(command: str, *args: str) -> str:
    out = io.StringIO()
    call_command(command, *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


CLI: dict[str, Callable[[World, str], str]] = {
    "view": lambda w, u: _cli("evaluate", str(w.model.pk), str(DEMO_SLICE), "--owner", u),
    "classify": lambda w, u: _cli("predict", str(w.model.pk), "--text", "Heart failure",
                                  "--owner", u, "--project", str(w.project.pk)),
    "upload": lambda w, u: _cli("import_dataset", str(DEMO_SLICE), "--name", "CLI import",
                                "--owner", u, "--project", str(w.project.pk)),
    "train": lambda w, u: _cli("train_model", "--dataset", str(w.dataset.pk), "--type",
                               "tfidf_svm", "--owner", u, "--project", str(w.project.pk)),
}
CLI_NEEDS = {"view": "reviewer", "classify": "reviewer", "upload": "maintainer",
             "train": "maintainer"}
CLI_CASES = [(action, role) for action in CLI for role in ROLES]


@pytest.mark.parametrize(("action", "role"), CLI_CASES, ids=[f"cli-{a}-{r}" for a, r in CLI_CASES])
def test_a_command_run_for_a_member_gets_the_refusal_their_role_gets(
        world: World, action: str, role: str) -> None:
    username = world.users[role].username
    if RANK[role] >= RANK[CLI_NEEDS[action]]:
        assert CLI[action](world, username) is not None
    else:
        with pytest.raises(CommandError, match=f"needs the {CLI_NEEDS[action]} role"):
            CLI[action](world, username)
