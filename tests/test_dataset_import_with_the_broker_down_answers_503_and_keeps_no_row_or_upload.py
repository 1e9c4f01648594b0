"""With the broker unreachable, an upload to POST /api/datasets/ (on the real gunicorn) answers
503 "nothing was started", and nothing is kept: no import row (in the probe a `failed` row was
left behind) and no stored upload."""

from __future__ import annotations

from pathlib import Path

import pytest
import requests

from api.tokens import token_create
from core.queueing import UNREACHABLE_REASON
from dataset_management.models import Dataset, ImportJob
from tests.plugins.datasets import media_files
from tests.plugins.server import free_port

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_upload_with_the_broker_down_is_a_503_and_leaves_nothing(start_app_server, user,
                                                                     tmp_path: Path) -> None:
    server = start_app_server(CELERY_BROKER_URL=f"redis://127.0.0.1:{free_port()}/0")
    _, key = token_create(user=user, name="upload")
    path = tmp_path / "articles.csv"
    path.write_text("title,abstract,label\n" + "".join(
        f"Title {i},Heart study {i},{'ab'[i % 2]}\n" for i in range(40)))
    before = media_files()
    with path.open("rb") as handle:
        answer = requests.post(f"{server.url}/api/datasets/", files={"file": handle},
                               data={"name": "Down"}, timeout=60,
                               headers={"Authorization": f"Token {key}"})
    assert answer.status_code == 503, answer.text
    assert answer.json()["detail"] == UNREACHABLE_REASON
    assert not ImportJob.objects.exists()
    assert not Dataset.objects.exists()
    assert not {p for p in media_files() - before if p.startswith("imports/")}
