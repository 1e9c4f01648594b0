"""Send one bad file through each door (web upload, API, CLI) and check that nothing stayed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from classification.models import BatchJob
from dataset_management.models import Dataset
from tests.plugins.datasets import media_files


def web_upload(client: Client, name: str, content: bytes) -> Any:
    """Step 1 of the upload page: stage the file and preview it."""
    return client.post(reverse("datasets:upload"), {
        "file": SimpleUploadedFile(name, content), "name": "Bad", "split_ratios": "0.8,0.1,0.1",
        "seed": 42,
    })


def web_confirm(client: Client, token: str) -> Any:
    """Step 2: create the dataset from the staged file."""
    return client.post(reverse("datasets:upload_confirm"), {
        "token": token, "name": "Bad", "split_ratios": "0.8,0.1,0.1", "seed": "42",
        "action": "create",
    })


def api_client(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


def api_upload(client: APIClient, name: str, content: bytes) -> Any:
    return client.post("/api/datasets/", {"file": SimpleUploadedFile(name, content)},
                       format="multipart")


def cli_refusal(path: Path, owner: Any) -> str:
    """import_dataset's one-line error for the file."""
    with pytest.raises(CommandError) as caught:
        call_command("import_dataset", str(path), "--name", "Bad", "--owner", owner.username)
    return str(caught.value)


def assert_nothing_kept(before: set[str] | None = None, *, datasets: int = 0) -> None:
    """No new dataset or batch row (`datasets` were there before), and no file under MEDIA_ROOT
    (staging, datasets, batches) but those in `before`."""
    assert Dataset.objects.count() == datasets
    assert BatchJob.objects.count() == 0
    assert media_files() == (before or set())


def assert_refused(import_file: Any, path: Path, message: str, **kwargs: Any) -> None:
    """The service refuses the file with exactly `message` and keeps nothing."""
    from dataset_management.readers import DatasetFileError

    before = media_files()
    with pytest.raises(DatasetFileError) as caught:
        import_file(path, **kwargs)
    assert caught.value.message == message
    assert_nothing_kept(before)
