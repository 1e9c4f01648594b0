"""Every request example that /api/docs/ offers is a request that works.

The test reads the OpenAPI schema the docs page draws, and sends each example of each operation
as it stands, in its media type, with only this test's own rows put in: their ids in the path
and in `dataset` or `datasets`, and a real file in each file field (an example cannot carry
one; the docs page offers a file picker there). None may be refused: the predict example that
sent `text`, `texts` and `articles` together got a 400.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from rest_framework.test import APIClient

from projects import services as project_services
from tests.api_docs_support import screening_example_ids
from tests.batch_support import DEMO_SLICE

pytestmark = pytest.mark.django_db
PREDICT = "/api/models/{id}/predict/"


@dataclass
class Example:
    method: str
    path: str
    media_type: str
    name: str
    value: dict[str, Any]
    body_schema: dict[str, Any]

    def __str__(self) -> str:
        return f"{self.method.upper()} {self.path} ({self.media_type}) example {self.name!r}"


@pytest.fixture
def api(api_token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token}")
    return client


def read_schema(api: APIClient) -> dict[str, Any]:
    response = api.get("/api/schema/?format=json")
    assert response.status_code == 200
    return json.loads(response.content)


def resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def request_examples(schema: dict[str, Any]) -> Iterator[Example]:
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            content = operation.get("requestBody", {}).get("content", {})
            for media_type, body in content.items():
                for name, example in body.get("examples", {}).items():
                    yield Example(method, path, media_type, name, example["value"],
                                  resolve(schema, body["schema"]))


def file_fields(example: Example) -> list[str]:
    return [name for name, field in example.body_schema.get("properties", {}).items()
            if field.get("format") == "binary"]


def send(api: APIClient, example: Example, ids: dict[str, Any]) -> Any:
    def path_id(match: re.Match) -> str:
        key = (example.path.split("/")[2], match.group(1))  # ("models", "id")
        assert key in ids, f"{example}: no row of this test for {key}"
        return str(ids[key])

    url = re.sub(r"\{(\w+)\}", path_id, example.path)
    body = dict(example.value)
    section = example.path.split("/")[2]
    if "record" in body:  # a screening decision or resolution names its record
        body["record"] = ids[(section, "record:" + example.path.rstrip("/").rsplit("/", 1)[-1])]
    if "dataset" in body:
        body["dataset"] = ids.get((section, "dataset"), ids[("datasets", "id")])
    if "datasets" in body:  # the adaptation example names the datasets to read
        body["datasets"] = [ids[("datasets", "id")]]
    if "project" in body:  # an upload names its project (required when there are several)
        body["project"] = ids.get((section, "project"), ids[("projects", "id")])
    if "member_ids" in body:
        body["member_ids"] = ids[("models", "member_ids")]
    if example.media_type == "application/json":
        return getattr(api, example.method)(url, body, format="json")
    assert example.media_type == "multipart/form-data", example
    form: dict[str, Any] = {
        key: json.dumps(value) if isinstance(value, dict) else value
        for key, value in body.items()
    }
    for name in file_fields(example):
        form[name] = SimpleUploadedFile(DEMO_SLICE.name, DEMO_SLICE.read_bytes(), "text/csv")
    return getattr(api, example.method)(url, form, format="multipart")


def test_every_request_example_in_the_docs_is_answered_without_a_400(
    api: APIClient, user: Any, rows: Any, trained_model: Any, media_root: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    # The account the token example names, as setup_demo makes it on a fresh install; the
    # member examples add it to a project of this test's user, where it is already a viewer
    # for the role example to change.
    demo = get_user_model().objects.create_user("demo", "demo@example.org", "medlitbot-demo")
    team = project_services.project_create(user=user, name="Team")
    project_services.member_set(actor=user, project=team, member=demo, role="viewer")
    dataset = rows.dataset(user)
    job = rows.job(trained_model)
    # A second model of the same dataset, so the ensemble example has two members.
    twin = rows.model(user, trained_model.dataset, name="Twin",
                      artifact_path=trained_model.artifact_path,
                      label_names=trained_model.label_names)
    ids = {("datasets", "id"): dataset.pk, ("models", "id"): trained_model.pk,
           ("models", "member_ids"): [trained_model.pk, twin.pk], ("jobs", "id"): job.pk,
           ("projects", "id"): team.pk, ("projects", "user_id"): demo.pk,
           **screening_example_ids(user)}
    examples = list(request_examples(read_schema(api)))
    assert len(examples) >= 9, [str(e) for e in examples]

    answers = {}
    for example in examples:
        # Each on its own, from the same rows: a second upload of one file would be refused as
        # a duplicate, which says nothing about the example.
        with transaction.atomic(), django_capture_on_commit_callbacks(execute=False):
            response = send(api, example, ids)
            transaction.set_rollback(True)
        answers[str(example)] = (response.status_code, response.content[:300])
    refused = {name: answer for name, answer in answers.items() if not 200 <= answer[0] < 300}
    assert not refused, refused


def test_predict_offers_one_example_for_each_kind_of_input(api: APIClient) -> None:
    predict = [e for e in request_examples(read_schema(api)) if e.path == PREDICT]
    assert sorted(key for e in predict for key in e.value) == ["articles", "text", "texts"]
    assert all(len(e.value) == 1 for e in predict), "each example gives exactly one input"


def test_every_operation_that_takes_a_json_body_offers_an_example(api: APIClient) -> None:
    schema = read_schema(api)
    with_examples = {(e.method, e.path) for e in request_examples(schema)}
    json_bodies = {
        (method, path) for path, operations in schema["paths"].items()
        for method, operation in operations.items()
        if "application/json" in operation.get("requestBody", {}).get("content", {})
    }
    assert json_bodies, "the schema lost its request bodies"
    assert json_bodies <= with_examples, json_bodies - with_examples


def test_a_mapping_option_the_docs_do_not_name_is_refused_under_mapping(
    api: APIClient, media_root: Any,
) -> None:
    form = {"file": SimpleUploadedFile(DEMO_SLICE.name, DEMO_SLICE.read_bytes(), "text/csv"),
            "mapping": json.dumps({"title": "title", "label_column": "group"})}
    response = api.post("/api/datasets/", form, format="multipart")
    assert response.status_code == 400
    message = response.json()["mapping"][0]
    assert message.startswith("Unknown option(s): title. Known: abstract_column, label_column")
