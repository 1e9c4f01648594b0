"""Every route and every API operation, called with another project's ids, answers 404 and
says nothing about what is there.

The routes are walked from the URL conf and the operations from the OpenAPI schema, so a new
page or endpoint is probed without anyone remembering to add it here. The intruder owns a
project of their own (they are no lesser user), just not the victim's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from api.models import UserSession
from api.tokens import token_create
from classification.models import BatchJob, EvaluationJob, MLModel, TrainingJob
from classification.review.models import ReviewItem
from dataset_management.models import Dataset, ImportJob
from literature.models import SavedSearch, SearchRun
from projects import services as project_services
from screening.models import Prior, Record, ScreeningSession, SimulationRun, Tag

SECRET = "zeta"  # in every name the victim's rows carry; never in an answer to the intruder
# Routes whose parameters are not object ids: admin (staff only, by Django), a password-reset
# link and an invitation key (a secret, probed by tests/test_projects_invitations_*).
NOT_IDS = ("admin/", "accounts/reset/", "invite/")
PARAM = re.compile(r"<(?:\w+:)?(\w+)>|\(\?P<(\w+)>[^)]*\)|\{(\w+)\}")


def _walk(patterns: list[Any], prefix: str = "") -> Iterator[str]:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _walk(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            yield prefix + str(pattern.pattern)


def _fill(route: str, ids: dict[str, Any]) -> str:
    """Put the victim's id for each parameter, chosen by the collection it follows."""
    route = route.replace("^", "").replace("$", "")
    out, last = "", ""
    for piece in re.split(r"(/)", route):
        match = PARAM.fullmatch(piece)
        if match:
            name = next(g for g in match.groups() if g)
            key = name if name in ("row", "user_id", "invitation_id", "fmt", "action") else last
            if key not in ids:
                raise AssertionError(f"No victim id for {name!r} after {last!r} in {route}")
            piece = str(ids[key])
        elif piece not in ("/", ""):
            last = piece
        out += piece
    return "/" + out.lstrip("/")


@pytest.fixture
def victim_ids(db: None) -> dict[str, Any]:
    users = get_user_model().objects
    alice = users.create_user("zeta_alice", "zeta@example.org", "pw-zeta-123456")
    project = project_services.project_create(user=alice, name="Zeta oncology consortium")
    dataset = Dataset.objects.create(project=project, owner=alice, name="Zeta dataset",
                                     label_names=["zeta_label"])
    model = MLModel.objects.create(project=project, dataset=dataset, owner=alice,
                                   name="Zeta model", model_type="tfidf_svm")
    job = TrainingJob.objects.create(ml_model=model, reason="zeta failure")
    batch = BatchJob.objects.create(ml_model=model, owner=alice, filename="zeta_batch.csv")
    evaluation = EvaluationJob.objects.create(ml_model=model, owner=alice,
                                              filename="zeta_evaluation.csv")
    ReviewItem.objects.create(batch=batch, row=1, title="Zeta article", abstract="zeta")
    invitation, _ = project_services.invitation_create(user=alice, project=project,
                                                       role="viewer", email="zeta@example.org")
    token, _ = token_create(user=alice, name="Zeta token")
    browser_session = UserSession.objects.create(user=alice, session_key="zeta" + "0" * 36,
                                                 user_agent="zeta browser")
    session = ScreeningSession.objects.create(project=project, dataset=dataset,
                                              name="Zeta screening", labels=["zeta_label"])
    record = Record.objects.create(session=session, position=0, title="Zeta record")
    tag = Tag.objects.create(session=session, name="zeta tag")
    prior = Prior.objects.create(record=record, label="zeta_label", value="yes",
                                 how="record ids", set_by=alice)
    simulation = SimulationRun.objects.create(dataset=dataset, label="zeta_label")
    dataset_import = ImportJob.objects.create(project=project, owner=alice, name="Zeta import",
                                              filename="zeta.csv", reason="zeta failure")
    search = SavedSearch.objects.create(project=project, owner=alice, name="Zeta search",
                                        query="zeta[tiab]", collection=dataset)
    search_run = SearchRun.objects.create(search=search, query="zeta[tiab]",
                                          digest="1 new article; 1 predicted zeta_label")
    # fmt and action are not ids: the first of their kind, so the view reaches its lookup.
    return {"datasets": dataset.pk, "models": model.pk, "jobs": job.pk, "batches": batch.pk.hex,
            "evaluations": evaluation.pk.hex,
            "projects": project.pk, "tokens": token.pk, "row": 1, "user_id": alice.pk,
            "invitation_id": invitation.pk, "screening": session.pk, "fulltext": record.pk,
            "records": record.pk, "tags": tag.pk, "priors": prior.pk,
            "sessions": browser_session.pk,
            "simulations": simulation.pk, "imports": dataset_import.pk,
            "fmt": "csv", "action": "resolve",
            "searches": search.pk, "runs": search_run.pk}


@pytest.fixture
def intruder(db: None) -> Any:
    mallory = get_user_model().objects.create_user("mallory", "m@example.org", "pw-mallory-1")
    project_services.project_create(user=mallory, name="Mallory's own project")
    return mallory


def _assert_hidden(response: Any, what: str) -> None:
    body = response.content.decode(errors="replace").lower()
    assert response.status_code == 404, f"{what} answered {response.status_code}"
    assert SECRET not in body, f"{what} revealed something: {body[:300]}"


def test_every_page_route_answers_404_for_another_projects_ids(
        victim_ids: dict[str, Any], intruder: Any) -> None:
    client = Client()
    client.force_login(intruder)
    routes = [r for r in _walk(get_resolver().url_patterns)
              if PARAM.search(r) and not r.startswith(NOT_IDS) and not r.startswith("api/")]
    requests = 0
    for route in routes:
        url = _fill(route, victim_ids)
        answers = {"GET": client.get(url), "POST": client.post(url, {})}
        requests += 2
        for method, response in answers.items():
            if response.status_code == 405:  # refused by method before any lookup: nothing said
                assert SECRET not in response.content.decode().lower()
                continue
            _assert_hidden(response, f"{method} {url}")
        assert any(r.status_code == 404 for r in answers.values()), url
    print(f"\nprobed {len(routes)} page routes with {requests} requests")
    assert len(routes) >= 30


def test_every_api_operation_answers_404_for_another_projects_ids(
        victim_ids: dict[str, Any], intruder: Any) -> None:
    client = APIClient()
    _, key = token_create(user=intruder, name="probe")
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    schema = SchemaGenerator().get_schema(request=None, public=True)
    operations = 0
    for path, methods in schema["paths"].items():
        if "{" not in path:
            continue
        url = _fill(path, victim_ids)
        for method in methods:
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            response = getattr(client, method)(url, {}, format="json")
            _assert_hidden(response, f"{method.upper()} {url}")
            operations += 1
    print(f"\nprobed {operations} API operations")
    assert operations >= 20
