"""DELETE /api/batches/<id>/: a maintainer removes a finished batch and its files at once; a
running one is refused until cancelled; a reviewer is refused by role; a stranger gets 404."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from api.tokens import token_create
from classification.models import BatchJob
from projects import services as project_services
from tests.batch_support import batch_files, completed_batch


def _client(user: Any) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_create(user=user, name='t')[1]}")
    return client


def test_a_finished_batch_is_deleted_with_its_files(
        user: Any, trained_model: Any, media_root: Any,
        django_capture_on_commit_callbacks: Any) -> None:
    batch = completed_batch(user, trained_model, [(1, "Heart", "cardiovascular", 0.9, 0.1)],
                            ["cardiovascular", "neurological"])
    assert batch_files(batch)
    with django_capture_on_commit_callbacks(execute=True):  # files go once the delete commits
        response = _client(user).delete(f"/api/batches/{batch.pk.hex}/")
    assert response.status_code == 204
    assert not BatchJob.objects.filter(pk=batch.pk).exists()
    assert not batch_files(batch)


def test_a_running_batch_is_refused_and_kept(user: Any, trained_model: Any) -> None:
    batch = BatchJob.objects.create(owner=user, ml_model=trained_model, filename="a.csv",
                                    status=BatchJob.Status.RUNNING)
    response = _client(user).delete(f"/api/batches/{batch.pk.hex}/")
    assert response.status_code == 409
    assert "Cancel the batch" in response.json()["detail"]
    assert BatchJob.objects.filter(pk=batch.pk).exists()


def test_a_reviewer_is_refused_by_role_and_a_stranger_sees_nothing(
        user: Any, other_user: Any, trained_model: Any) -> None:
    batch = BatchJob.objects.create(owner=user, ml_model=trained_model, filename="a.csv",
                                    status=BatchJob.Status.COMPLETED)
    stranger = _client(other_user).delete(f"/api/batches/{batch.pk.hex}/")
    assert stranger.status_code == 404
    assert "a.csv" not in stranger.content.decode()
    reviewer = get_user_model().objects.create_user("rita")
    project_services.member_set(actor=user, project=trained_model.project, member=reviewer,
                                role="reviewer")
    refused = _client(reviewer).delete(f"/api/batches/{batch.pk.hex}/")
    assert refused.status_code == 403
    assert "needs the maintainer role" in refused.json()["detail"]
    assert BatchJob.objects.filter(pk=batch.pk).exists()
