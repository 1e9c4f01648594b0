"""Every POST, PUT and PATCH in the OpenAPI schema that /api/docs/ draws documents its body.

The schema is read as a client reads it, from /api/schema/. An operation that takes no body is
named below with the reason; any other without a requestBody, or with one that names no keys,
fails the test. `POST /api/screening/{id}/decide/` was documented with no body at all.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

WRITES = ("post", "put", "patch")

# (method, path) -> why it takes no body: each acts on the row its path names, as it stands.
TAKES_NO_BODY = {
    ("post", "/api/batches/{batch_id}/cancel/"): "cancels the batch the path names",
    ("post", "/api/datasets/imports/{id}/cancel/"): "cancels the import the path names",
    ("post", "/api/evaluations/{job_id}/cancel/"): "cancels the evaluation the path names",
    ("post", "/api/jobs/{id}/cancel/"): "cancels the training job the path names",
    ("post", "/api/jobs/{id}/resume/"): "resumes the job from its own last checkpoint",
    ("post", "/api/screening/{id}/unblind/"): "ends the blinding of the session the path names",
    ("post", "/api/searches/{id}/runs/"): "runs the saved search as it is saved",
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


def writes(schema: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(method, path): operation for path, operations in schema["paths"].items()
            for method, operation in operations.items() if method in WRITES}


def test_every_write_documents_a_body_with_its_keys_unless_it_is_named_as_taking_none(
        schema: dict[str, Any]) -> None:
    undocumented, keyless = [], []
    for key, operation in sorted(writes(schema).items()):
        if key in TAKES_NO_BODY:
            continue
        content = operation.get("requestBody", {}).get("content", {})
        if not content:
            undocumented.append(key)
        for media_type, body in content.items():
            if not resolved(schema, body.get("schema", {})).get("properties"):
                keyless.append((*key, media_type))
    assert undocumented == []
    assert keyless == []


def test_the_operations_named_as_taking_no_body_exist_and_take_none(
        schema: dict[str, Any]) -> None:
    found = writes(schema)
    assert sorted(set(TAKES_NO_BODY) - set(found)) == []
    assert [key for key in TAKES_NO_BODY if "requestBody" in found[key]] == []


def test_a_screening_decision_documents_the_record_and_its_values_per_label(
        schema: dict[str, Any]) -> None:
    operation = schema["paths"]["/api/screening/{id}/decide/"]["post"]
    body = resolved(schema, operation["requestBody"]["content"]["application/json"]["schema"])
    assert {"record", "values", "reasons", "note"} <= set(body["properties"])
    assert set(body["required"]) == {"record", "values"}
    values = body["properties"]["values"]["additionalProperties"]
    assert values["enum"] == ["yes", "no", "unsure"]


def test_a_session_body_marks_optional_what_the_api_fills_in(schema: dict[str, Any]) -> None:
    operation = schema["paths"]["/api/screening/sessions/"]["post"]
    body = resolved(schema, operation["requestBody"]["content"]["application/json"]["schema"])
    assert set(body["required"]) == {"name", "labels"}
    assert body["properties"]["labels"]["type"] == "array"
    assert body["properties"]["recall_target"]["type"] == "number"
    assert body["properties"]["ranker_every"]["default"] == 10
