"""Every GET in the OpenAPI schema that answers a list documents the pager's shape, and the
lists page for real: followed by `next` to the end, a list gives each row once.

The schema is read as a client reads it, from /api/schema/. The pager is DRF's
PageNumberPagination (settings.REST_FRAMEWORK): `{count, next, previous, results}`, `?page=`.
A GET whose answer is not a list of unbounded length is named below with the reason; any other
that does not document the paged shape fails, so a new list route is paged or named here.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.urls import reverse
from rest_framework.pagination import PageNumberPagination
from rest_framework.test import APIClient

from screening import services
from tests.priors_support import api_of, titled_session_make
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db

PAGED_KEYS = {"count", "next", "previous", "results"}

# path -> why its GET is not an unbounded list.
NOT_A_LIST = {
    "/api/batches/{batch_id}/": "one batch",
    "/api/batches/{batch_id}/result/": "one batch's result file, streamed",
    "/api/batches/{batch_id}/review/": "paged by its own ?limit=&offset=, with its count",
    "/api/datasets/imports/{id}/": "one import job",
    "/api/datasets/{id}/": "one dataset",
    "/api/evaluations/{job_id}/": "one evaluation",
    "/api/jobs/{id}/": "one job; its log lines are read in steps by ?since=&last=",
    "/api/models/compare/": "the few models named in ?ids=",
    "/api/models/{id}/": "one model",
    "/api/models/{id}/export/": "one model's archive",
    "/api/models/{id}/metrics/": "one model's metrics, per label of its fixed label set",
    "/api/projects/{id}/": "one project",
    "/api/runs/{id}/": "one search run",
    "/api/screening/simulations/{id}/": "one simulation",
    "/api/screening/{id}/": "one session",
    "/api/screening/{id}/export/{fmt}/": "one session's export file, streamed",
    "/api/screening/{id}/fulltext/{record}/": "one record's full-text report",
    "/api/screening/{id}/next/": "one record, the next for you",
    "/api/screening/{id}/skip/": "the count of your skipped records and the first 50 only",
    "/api/screening/{id}/tags/": "the session's own tag set, each defined by hand by a "
                                 "maintainer, as the session page shows it whole",
    "/api/searches/{id}/": "one saved search",
    "/api/tokens/{id}/": "one token",
}


@pytest.fixture
def schema(api_token: str) -> dict[str, Any]:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token}")
    response = client.get("/api/schema/?format=json")
    assert response.status_code == 200
    return json.loads(response.content)


def resolved(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def reads(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {path: operations["get"] for path, operations in schema["paths"].items()
            if "get" in operations}


def paged(schema: dict[str, Any], operation: dict[str, Any]) -> bool:
    answer = operation["responses"].get("200", {}).get("content", {}).get("application/json")
    body = resolved(schema, (answer or {}).get("schema", {}))
    results = body.get("properties", {}).get("results", {})
    return (body.get("type") == "object" and set(body["properties"]) >= PAGED_KEYS
            and results.get("type") == "array" and bool(results.get("items"))
            and "page" in {p["name"] for p in operation.get("parameters", [])})


def test_every_get_documents_the_paged_shape_unless_it_is_named_as_not_a_list(
        schema: dict[str, Any]) -> None:
    unpaged = [path for path, operation in sorted(reads(schema).items())
               if path not in NOT_A_LIST and not paged(schema, operation)]
    assert unpaged == []


def test_the_routes_named_as_not_lists_exist_and_answer_no_bare_array(
        schema: dict[str, Any]) -> None:
    found = reads(schema)
    assert sorted(set(NOT_A_LIST) - set(found)) == []
    arrays = [path for path in NOT_A_LIST for media in
              found[path]["responses"].get("200", {}).get("content", {}).values()
              if resolved(schema, media.get("schema", {})).get("type") == "array"]
    assert arrays == []


def followed(api: APIClient, url: str) -> tuple[list[Any], set[int]]:
    """Every row of a list, page after page by `next`, and the counts the pages gave."""
    rows, counts = [], set()
    while url:
        answer = api.get(url)
        assert answer.status_code == 200, answer.content
        body = answer.json()
        assert set(body) == PAGED_KEYS
        rows += body["results"]
        counts.add(body["count"])
        url = body["next"]
    return rows, counts


@pytest.fixture
def two_a_page(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(PageNumberPagination, "page_size", 2)


def test_sessions_records_and_priors_page_by_next_with_each_row_once(
        team, two_a_page: None) -> None:  # noqa: F811
    first = titled_session_make(team)
    sessions = [first, *(services.session_create(
        user=team.maintainer, dataset=first.dataset, name=f"Screen {n}", labels=["oncological"])
        for n in range(4))]
    session = sessions[-1]
    records = list(session.records.order_by("position"))
    api = api_of(team.maintainer)
    marked = api.post(reverse("api:screening_priors", args=[session.pk]),
                      {"label": "oncological", "value": "no",
                       "record_ids": [r.pk for r in records]}, format="json")
    assert marked.status_code == 201, marked.content

    listed, counts = followed(api, reverse("api:screening_sessions"))
    assert [row["id"] for row in listed] == [s.pk for s in reversed(sessions)]
    assert counts == {5}
    listed, counts = followed(api, reverse("api:screening_records", args=[session.pk]))
    assert [row["id"] for row in listed] == [r.pk for r in records]
    assert counts == {len(records)}
    listed, counts = followed(api, reverse("api:screening_priors", args=[session.pk]))
    assert [row["record"] for row in listed] == [r.pk for r in records]
    assert counts == {len(records)}
