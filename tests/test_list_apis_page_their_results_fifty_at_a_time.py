"""The API lists that used to answer every row in one array (a model's evaluations, screening
sessions, simulations and conflicts, saved searches and a search's runs) page like the other list
APIs: `{count, next, previous, results}`, 50 a page, and page 2 holds exactly the rest."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from classification.models import EvaluationJob, MLModel
from dataset_management.models import Dataset
from literature.models import SavedSearch, SearchRun
from projects import services as project_services
from screening.models import Decision, Record, ScreeningSession, SimulationRun

pytestmark = pytest.mark.django_db

ROWS = 53  # one full page of 50 and three more


@pytest.fixture
def project(user: Any) -> Any:
    return project_services.project_create(user=user, name="Thousands of runs")


@pytest.fixture
def dataset(project: Any, user: Any) -> Dataset:
    return Dataset.objects.create(project=project, owner=user, name="Collection",
                                  label_names=["oncological"])


@pytest.fixture
def api(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def both_pages(api: APIClient, url: str, key: str = "id") -> list[Any]:
    """Read page 1 and page 2, check the shape of each, and return every row's `key` in order."""
    first = api.get(url)
    assert first.status_code == 200, first.content
    first = first.json()
    assert first["count"] == ROWS
    assert len(first["results"]) == 50
    assert first["previous"] is None
    assert "page=2" in first["next"]
    second = api.get(first["next"])
    assert second.status_code == 200, second.content
    second = second.json()
    assert second["count"] == ROWS
    assert len(second["results"]) == ROWS - 50
    assert second["next"] is None
    assert second["previous"] is not None
    return [row[key] for row in first["results"] + second["results"]]


def test_a_models_evaluations_come_fifty_a_page_newest_first(
        api: APIClient, project: Any, dataset: Dataset, user: Any) -> None:
    model = MLModel.objects.create(project=project, dataset=dataset, owner=user, name="Model",
                                   model_type="tfidf_logreg")
    EvaluationJob.objects.bulk_create(
        EvaluationJob(project=project, ml_model=model, owner=user, filename=f"file {i}.csv")
        for i in range(ROWS))

    ids = both_pages(api, f"/api/models/{model.pk}/evaluations/")

    assert sorted(ids) == sorted(job.pk.hex for job in EvaluationJob.objects.all())
    newest = list(EvaluationJob.objects.order_by("-created_at", "-pk").values_list("pk",
                                                                                     flat=True))
    assert ids == [pk.hex for pk in newest]


def test_screening_sessions_come_fifty_a_page_on_both_list_routes(
        api: APIClient, project: Any, dataset: Dataset) -> None:
    ScreeningSession.objects.bulk_create(
        ScreeningSession(project=project, dataset=dataset, name=f"Session {i}",
                         labels=["oncological"]) for i in range(ROWS))
    every = set(ScreeningSession.objects.values_list("pk", flat=True))

    assert set(both_pages(api, "/api/screening/")) == every
    assert set(both_pages(api, "/api/screening/sessions/")) == every


def test_screening_simulations_come_fifty_a_page(api: APIClient, dataset: Dataset) -> None:
    SimulationRun.objects.bulk_create(SimulationRun(dataset=dataset, label="oncological")
                                      for _ in range(ROWS))

    ids = both_pages(api, "/api/screening/simulations/")

    assert len(set(ids)) == ROWS
    assert set(ids) == set(SimulationRun.objects.values_list("pk", flat=True))


def test_a_sessions_conflicts_come_fifty_a_page_in_the_records_order(
        api: APIClient, project: Any, dataset: Dataset, user: Any, other_user: Any) -> None:
    session = ScreeningSession.objects.create(project=project, dataset=dataset, name="Double",
                                              labels=["oncological"], reviewers_per_record=2)
    records = Record.objects.bulk_create(
        Record(session=session, position=i, title=f"Article {i}", reviewer_count=2)
        for i in range(ROWS))
    Decision.objects.bulk_create(
        Decision(record=record, reviewer=reviewer, label="oncological", value=value)
        for record in records for reviewer, value in ((user, "yes"), (other_user, "no")))

    conflicts = both_pages(api, f"/api/screening/{session.pk}/conflicts/", key="record")

    assert [conflict["id"] for conflict in conflicts] == [record.pk for record in records]


def test_saved_searches_and_a_searchs_runs_come_fifty_a_page(
        api: APIClient, project: Any, user: Any) -> None:
    searches = SavedSearch.objects.bulk_create(
        SavedSearch(project=project, owner=user, name=f"Search {i:02}", query=f"topic {i}")
        for i in range(ROWS))
    runs = SearchRun.objects.bulk_create(
        SearchRun(search=searches[0], status=SearchRun.Status.COMPLETED, digest=f"run {i}")
        for i in range(ROWS))

    names = both_pages(api, f"/api/searches/?project={project.pk}", key="name")
    run_ids = both_pages(api, f"/api/searches/{searches[0].pk}/runs/")

    assert names == [f"Search {i:02}" for i in range(ROWS)]
    assert sorted(run_ids) == sorted(run.pk for run in runs)
    assert run_ids == list(SearchRun.objects.order_by("-created_at", "-pk")
                           .values_list("pk", flat=True))
