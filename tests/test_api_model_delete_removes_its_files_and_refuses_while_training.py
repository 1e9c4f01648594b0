"""DELETE /api/models/<id>/ removes the model and its files once the deletion commits, answers
409 while the model still trains, and 404 for another user's model."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from classification import paths
from classification.models import MLModel, TrainingJob

pytestmark = pytest.mark.django_db


def test_the_api_deletes_a_model_with_its_artifact(
    client: Any, api_token: str, user: Any, rows: Any, tfidf_artifact: dict[str, Any],
    tmp_path: Path, settings: Any, django_capture_on_commit_callbacks: Any,
) -> None:
    settings.MODEL_ARTIFACT_ROOT = tmp_path / "artifacts"
    model = rows.model(user, rows.dataset(user))
    artifact = paths.model_artifact_dir(model.pk)
    shutil.copytree(tfidf_artifact["path"], artifact)
    MLModel.objects.filter(pk=model.pk).update(artifact_path=str(artifact))

    with django_capture_on_commit_callbacks(execute=True):
        response = client.delete(f"/api/models/{model.pk}/",
                                 HTTP_AUTHORIZATION=f"Token {api_token}")

    assert response.status_code == 204
    assert not MLModel.objects.filter(pk=model.pk).exists()
    assert not artifact.exists()


def test_the_api_refuses_to_delete_a_model_that_is_training(
    client: Any, api_token: str, user: Any, rows: Any,
) -> None:
    model = rows.model(user, rows.dataset(user), status=MLModel.Status.TRAINING)
    rows.job(model, status=TrainingJob.Status.RUNNING)

    response = client.delete(f"/api/models/{model.pk}/", HTTP_AUTHORIZATION=f"Token {api_token}")

    assert response.status_code == 409
    assert "active" in response.json()["detail"] or "training" in response.json()["detail"]
    assert MLModel.objects.filter(pk=model.pk).exists()


def test_another_users_model_cannot_be_deleted(
    client: Any, other_api_token: str, user: Any, rows: Any,
) -> None:
    model = rows.model(user, rows.dataset(user))

    response = client.delete(f"/api/models/{model.pk}/",
                             HTTP_AUTHORIZATION=f"Token {other_api_token}")

    assert response.status_code == 404
    assert MLModel.objects.filter(pk=model.pk).exists()
