"""With the broker unreachable, every API route that sends a task answers 503 "nothing was
started" (a screening session, which exists once made, answers 201 and says why), and leaves
nothing behind that waits for a message that was never sent: a new job leaves no row; a batch,
a search run, a simulation, an evaluation or a resumed job is failed with the reason."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.response import Response
from rest_framework.test import APIClient

from classification.mlmodels.evaluation_model import EvaluationJob
from classification.models import BatchJob, MLModel, TrainingJob
from core.queueing import UNREACHABLE_REASON
from dataset_management.models import Dataset, ImportJob
from literature.models import SearchRun
from screening.models import ScreeningSession, SimulationRun
from tests.batch_support import DEMO_SLICE
from tests.eutils_support import living_review
from tests.screening_support import FORMATS, Team, team_make, trained_model_make
from tests.test_batch_broker_down_at_creation_answers_503_and_leaves_no_orphan import (
    broker_down,  # noqa: F401
)

pytestmark = pytest.mark.django_db(transaction=True)  # the task is sent when a commit happens

ACTIVE = ("queued", "running")
WAITING_KINDS = (TrainingJob, BatchJob, EvaluationJob, ImportJob, SearchRun, SimulationRun)
# A simulation names its status `state` and its reason `error`.
FIELDS = {SimulationRun: ("state", "error")}


Send = Callable[[APIClient], Response]
# A case makes the rows its route needs (a model to classify with, a failed job) and returns
# the request, so what the route itself leaves is measured apart from them.
Prepare = Callable[[Team, dict[str, Any]], Send]


class Case:
    """How one route is called, its documented answer, and the kinds of row it may keep (each
    failed with the reason, never waiting)."""

    def __init__(self, prepare: Prepare, *, status: int = 503,
                 kept: tuple[type, ...] = ()) -> None:
        self.prepare, self.status, self.kept = prepare, status, kept


def _train(path: str) -> Prepare:
    def prepare(team: Team, artifact: dict[str, Any]) -> Send:
        return lambda client: client.post(
            path, {"dataset": team.dataset.pk, "model_type": "tfidf_logreg"}, format="json")
    return prepare


def _resume(team: Team, artifact: dict[str, Any]) -> Send:
    model = MLModel.objects.create(owner=team.owner, project=team.project, dataset=team.dataset,
                                   name="Failed", model_type="tfidf_logreg", status="failed")
    job = TrainingJob.objects.create(ml_model=model, status="failed", reason="earlier")
    return lambda client: client.post(f"/api/jobs/{job.pk}/resume/")


def _adapt(team: Team, artifact: dict[str, Any]) -> Send:
    return lambda client: client.post("/api/adaptations/", {
        "datasets": [team.dataset.pk], "name": "Adapted",
        "config": {"adapt_base": "minilm", "epochs": 1}}, format="json")


def _ensemble(team: Team, artifact: dict[str, Any]) -> Send:
    members = [trained_model_make(team, artifact, name=f"Member {i}").pk for i in range(2)]
    return lambda client: client.post("/api/models/ensemble/", {"member_ids": members},
                                      format="json")


def _upload(path: str, field: str = "file", **data: Any) -> Send:
    def send(client: APIClient) -> Response:
        with DEMO_SLICE.open("rb") as handle:
            return client.post(path, {field: handle, **data}, format="multipart")
    return send


def _batch(team: Team, artifact: dict[str, Any]) -> Send:
    return _upload(f"/api/models/{trained_model_make(team, artifact).pk}/batches/")


def _evaluation(team: Team, artifact: dict[str, Any]) -> Send:
    return _upload(f"/api/models/{trained_model_make(team, artifact).pk}/evaluations/")


def _large_predict(team: Team, artifact: dict[str, Any]) -> Send:
    path = f"/api/models/{trained_model_make(team, artifact).pk}/predict/"
    texts = [f"Heart failure outcomes, cohort {i}" for i in range(100)]
    return lambda client: client.post(path, {"texts": texts}, format="json")


def _import(team: Team, artifact: dict[str, Any]) -> Send:
    return _upload("/api/datasets/", name="Down", project=team.project.pk)


def _collection(team: Team, artifact: dict[str, Any]) -> Send:
    def send(client: APIClient) -> Response:
        with (FORMATS / "comma.csv").open("rb") as one, DEMO_SLICE.open("rb") as two:
            return client.post("/api/datasets/collections/", {
                "files": [one, two], "name": "Down", "project": team.project.pk},
                format="multipart")
    return send


def _search_run(team: Team, artifact: dict[str, Any]) -> Send:
    search = living_review(team.owner, artifact)
    return lambda client: client.post(f"/api/searches/{search.pk}/runs/")


def _simulation(team: Team, artifact: dict[str, Any]) -> Send:
    return lambda client: client.post("/api/screening/simulations/", {
        "dataset": team.dataset.pk, "label": "oncological", "seeds": 1}, format="json")


def _screening_session(team: Team, artifact: dict[str, Any]) -> Send:
    model = trained_model_make(team, artifact)
    return lambda client: client.post("/api/screening/sessions/", {
        "name": "Onc", "labels": ["oncological"], "dataset": team.dataset.pk,
        "starting_model": model.pk}, format="json")


CASES = {
    "POST /api/jobs/": Case(_train("/api/jobs/")),
    "POST /api/models/": Case(_train("/api/models/")),
    "POST /api/models/ensemble/": Case(_ensemble),
    "POST /api/adaptations/": Case(_adapt),
    "POST /api/jobs/<id>/resume/": Case(_resume, kept=(TrainingJob,)),
    "POST /api/models/<id>/batches/": Case(_batch, kept=(BatchJob,)),
    "POST /api/models/<id>/predict/ (a batch)": Case(_large_predict, kept=(BatchJob,)),
    "POST /api/models/<id>/evaluations/": Case(_evaluation, kept=(EvaluationJob,)),
    "POST /api/datasets/": Case(_import),
    "POST /api/datasets/collections/": Case(_collection),
    "POST /api/searches/<id>/runs/": Case(_search_run, kept=(SearchRun,)),
    "POST /api/screening/simulations/": Case(_simulation, kept=(SimulationRun,)),
    "POST /api/screening/sessions/ (201, says why)": Case(_screening_session, status=201,
                                                          kept=(ScreeningSession,)),
}


def _counts() -> dict[type, int]:
    return {kind: kind.objects.count()
            for kind in (*WAITING_KINDS, MLModel, Dataset, ScreeningSession)}


@pytest.mark.parametrize("route", list(CASES))
def test_the_route_answers_as_documented_and_nothing_waits(
        broker_down: None, route: str, user: Any, media_root: Any,  # noqa: F811
        tfidf_artifact: dict[str, Any]) -> None:
    case = CASES[route]
    team = team_make(user)
    send = case.prepare(team, tfidf_artifact)
    client = APIClient()
    client.force_authenticate(user)
    before = _counts()
    response = send(client)

    assert response.status_code == case.status, response.content[:500]
    if case.status == 503:
        assert response.json() == {"detail": UNREACHABLE_REASON}
        assert response["Retry-After"]
    else:
        assert ScreeningSession.objects.get().ranker_error.endswith(UNREACHABLE_REASON)
    for kind in WAITING_KINDS:
        status, reason = FIELDS.get(kind, ("status", "reason"))
        assert not kind.objects.filter(**{f"{status}__in": ACTIVE}).exists(), kind.__name__
        if kind in case.kept:
            assert kind.objects.filter(**{status: "failed", f"{reason}__contains":
                                          "queue is unreachable"}).exists(), kind.__name__
    after = _counts()
    grown = {kind for kind in after if after[kind] > before[kind]}
    assert grown <= set(case.kept), grown
