"""`POST /api/datasets/` (and `/api/datasets/collections/`) without `project`: a user in one
project gets that one; a user in more than one gets a 400 that names each project's id and
name, and nothing is stored or queued; naming `project` then works. The README's curl examples
that create a dataset or a collection pass `project`."""

from __future__ import annotations

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from dataset_management.models import ImportJob
from projects.services import project_create, project_personal
from tests.import_support import api_import
from tests.plugins.datasets import ROOT

pytestmark = pytest.mark.django_db
CSV = b"title,abstract,group\n" + b"".join(
    f"Study {i} of outcomes,An abstract about study {i},{'yes' if i % 2 else 'no'}\n".encode()
    for i in range(20))


@pytest.fixture
def client(api_token) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token}")
    return client


def upload(name: str = "a.csv") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, CSV, content_type="text/csv")


def test_one_project_is_used_without_being_named(client, user, media_root) -> None:
    personal = project_personal(user=user)
    body = api_import(client, {"file": upload(), "name": "Only"})
    assert body["project"] == personal.pk


def test_two_projects_without_project_is_a_400_naming_both(client, user, media_root) -> None:
    personal = project_personal(user=user)
    team = project_create(user=user, name="Cardiology team")
    response = client.post("/api/datasets/", {"file": upload(), "name": "Which"},
                           format="multipart")
    assert response.status_code == 400
    message = response.json()["project"][0]
    assert f"{personal.pk} ({personal.name})" in message
    assert f"{team.pk} (Cardiology team)" in message
    collection = client.post("/api/datasets/collections/", {
        "files": [upload("a.csv"), upload("b.csv")], "name": "Which"}, format="multipart")
    assert collection.status_code == 400
    assert collection.json()["project"] == [message]
    assert ImportJob.objects.count() == 0

    body = api_import(client, {"file": upload(), "name": "Team", "project": team.pk})
    assert body["project"] == team.pk


def test_the_readme_curl_examples_that_upload_name_a_project() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = re.findall(r"^curl .*?(?<!\\)$", readme, flags=re.MULTILINE | re.DOTALL)
    uploads = [c for c in commands if re.search(r"/api/datasets/(collections/)?$", c.strip())]
    assert len(uploads) == 2
    assert all("-F project=" in command for command in uploads)
