"""Every route that gives a text to a model caps it at MAX_TEXT_CHARS (102,002 by default): one
character more is a 400 that names the cap, before any model is loaded; so does a dataset's
description at upload, before anything is stored. Any body that is not an upload (JSON, a form)
past MAX_BODY_MB is a 413 from its Content-Length, before it is parsed."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.test import APIClient

from dataset_management.models import Dataset, ImportJob

pytestmark = pytest.mark.django_db
CAP = settings.MAX_TEXT_CHARS
NAMED = f"At most {CAP:,} characters per text (MAX_TEXT_CHARS)"


@pytest.fixture
def api(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def unloadable(user: Any, rows: Any) -> Any:
    """A trained model whose artifact is missing: any model work would fail on loading it."""
    return rows.model(user, rows.dataset(user), artifact_path="/nonexistent/model")


def _messages(body: Any) -> str:
    return json.dumps(body)


@pytest.mark.parametrize("body", [
    {"text": "a" * (CAP + 1)},
    {"texts": ["short", "b" * (CAP + 1)]},
    {"articles": [{"title": "T", "abstract": "c" * (CAP + 1)}]},
    {"articles": [{"title": "t" * 60_000, "abstract": "d" * 60_000}]},  # joined past the cap
])
def test_predict_refuses_a_text_past_the_cap_naming_it(api: APIClient, unloadable: Any,
                                                       body: dict[str, Any]) -> None:
    response = api.post(f"/api/models/{unloadable.pk}/predict/", body, format="json")
    assert response.status_code == 400, response.content[:300]
    assert NAMED in _messages(response.json())


def test_explain_refuses_a_text_past_the_cap_naming_it(api: APIClient, unloadable: Any) -> None:
    response = api.post(f"/api/models/{unloadable.pk}/explain/", {"text": "e" * (CAP + 1)},
                        format="json")
    assert response.status_code == 400, response.content[:300]
    assert NAMED in _messages(response.json())


def test_a_text_at_the_cap_is_classified(api: APIClient, trained_model: Any) -> None:
    text = ("Heart failure outcomes in a cohort. " * 4000)[:CAP]
    response = api.post(f"/api/models/{trained_model.pk}/predict/", {"text": text},
                        format="json")
    assert response.status_code == 200, response.content[:300]
    assert len(response.json()["predictions"]) == 1


def test_a_json_body_past_max_body_mb_is_a_413_before_it_is_parsed(
        api: APIClient, unloadable: Any) -> None:
    # 9.5 MB, and not even JSON: refused from its length alone, so never parsed.
    body = b"{" + b"x" * int(9.5 * 2**20)
    response = api.generic("POST", f"/api/models/{unloadable.pk}/predict/", body,
                           content_type="application/json")
    assert response.status_code == 413
    detail = response.json()["detail"]
    assert f"the limit is {settings.MAX_BODY_MB:g} MB (MAX_BODY_MB)" in detail


def test_a_form_body_past_max_body_mb_is_a_413_page(user: Any) -> None:
    client = Client()
    client.force_login(user)
    response = client.generic("POST", "/classification/classify/",
                              b"text=" + b"x" * int(settings.MAX_BODY_MB * 2**20),
                              content_type="application/x-www-form-urlencoded")
    assert response.status_code == 413
    assert "MAX_BODY_MB" in response.content.decode()
    assert "Go back" in response.content.decode()


@pytest.mark.parametrize("path", ["/api/datasets/", "/api/datasets/collections/"])
def test_an_upload_with_a_description_past_the_cap_stores_nothing(
        api: APIClient, media_root: Any, path: str) -> None:
    rows = "title,abstract\n" + "".join(f"Title {i},Heart study {i}\n" for i in range(5))
    files = [SimpleUploadedFile(f"{n}.csv", rows.encode(), "text/csv") for n in "ab"]
    field = {"file": files[0]} if path.endswith("datasets/") else {"files": files}
    response = api.post(path, {**field, "name": "Long", "description": "f" * (CAP + 1)},
                        format="multipart")
    assert response.status_code == 400, response.content[:300]
    assert NAMED in _messages(response.json())
    assert not ImportJob.objects.exists()
    assert not Dataset.objects.exists()
