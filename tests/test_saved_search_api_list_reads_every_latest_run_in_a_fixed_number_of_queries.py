"""The API's list of saved searches shows each search's latest run, read for all of them at
once: the number of queries does not grow with the searches (it used to be one more per
search), and each search still shows its own newest run."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from literature.models import SavedSearch, SearchRun
from projects import services as project_services

pytestmark = pytest.mark.django_db


def searches_with_runs(project: Any, owner: Any, first: int, count: int) -> list[SavedSearch]:
    made = []
    for i in range(first, first + count):
        search = SavedSearch.objects.create(project=project, owner=owner, name=f"Search {i:02}",
                                            query=f"topic {i}")
        for digest in ("older", f"newest of {i}"):
            SearchRun.objects.create(search=search, status=SearchRun.Status.COMPLETED,
                                     digest=digest, pmids=[str(n) for n in range(50)])
        made.append(search)
    return made


def listed(client: APIClient, project: Any) -> tuple[list[dict[str, Any]], int]:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(f"/api/searches/?project={project.pk}")
    assert response.status_code == 200, response.content
    return response.json()["results"], len(queries)


def test_the_list_costs_the_same_queries_for_two_searches_or_twelve(user: Any) -> None:
    project = project_services.project_create(user=user, name="Living reviews")
    client = APIClient()
    client.force_authenticate(user)
    searches_with_runs(project, user, 0, 2)
    few, few_queries = listed(client, project)
    searches_with_runs(project, user, 2, 10)
    many, many_queries = listed(client, project)

    assert (len(few), len(many)) == (2, 12)
    assert many_queries == few_queries
    for i, body in enumerate(many):
        assert body["name"] == f"Search {i:02}"
        assert body["latest_run"]["digest"] == f"newest of {i}"
        assert body["latest_run"]["search"] == body["id"]
