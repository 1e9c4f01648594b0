"""Deleting a model from its page removes, once the deletion commits, its artifact, the
checkpoints its jobs kept and its batches' files; a folder outside MODEL_ARTIFACT_ROOT that a
row merely points at is never touched."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse

from classification import paths
from classification.batches import storage
from classification.models import BatchJob, MLModel, TrainingJob

pytestmark = pytest.mark.django_db


def files_under(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_a_deleted_model_leaves_no_files(
    alice_client: Any, user: Any, rows: Any, tfidf_artifact: dict[str, Any], tmp_path: Path,
    settings: Any, django_capture_on_commit_callbacks: Any,
) -> None:
    settings.MODEL_ARTIFACT_ROOT = tmp_path / "artifacts"
    settings.MEDIA_ROOT = tmp_path / "media"
    model = rows.model(user, rows.dataset(user), name="Doomed")
    artifact = paths.model_artifact_dir(model.pk)
    shutil.copytree(tfidf_artifact["path"], artifact)  # a real saved model
    MLModel.objects.filter(pk=model.pk).update(artifact_path=str(artifact))
    cancelled = rows.job(model, status=TrainingJob.Status.CANCELLED)
    kept = paths.job_output_dir(cancelled.pk) / "checkpoint-12"
    kept.mkdir(parents=True)
    (kept / "model.safetensors").write_bytes(b"\0" * 4096)
    (kept / "trainer_state.json").write_text("{}")
    rows.job(model, status=TrainingJob.Status.FAILED)  # failed before any checkpoint
    batch = BatchJob.objects.create(owner=user, ml_model=model, filename="articles.csv",
                                    status=BatchJob.Status.COMPLETED)
    batch_folder = storage.batch_folder(owner_id=user.pk, batch_id=batch.pk)
    batch_folder.mkdir(parents=True)
    (batch_folder / "input.csv").write_text("title;abstract\nA;B\n")
    (batch_folder / "result.csv").write_text("title;labels\nA;x\n")
    assert files_under(tmp_path / "artifacts")
    assert files_under(tmp_path / "media")

    with django_capture_on_commit_callbacks(execute=True):
        response = alice_client.post(reverse("classification:model_delete", args=[model.pk]))

    assert response.status_code == 302
    assert not MLModel.objects.filter(pk=model.pk).exists()
    assert files_under(tmp_path / "artifacts") == []
    assert files_under(tmp_path / "media") == []


def test_deleting_a_model_never_removes_a_folder_outside_the_artifact_root(
    alice_client: Any, user: Any, rows: Any, tmp_path: Path, settings: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    settings.MODEL_ARTIFACT_ROOT = tmp_path / "artifacts"
    elsewhere = tmp_path / "someone-elses-folder"
    elsewhere.mkdir()
    (elsewhere / "manifest.json").write_text("{}")
    model = rows.model(user, rows.dataset(user), artifact_path=str(elsewhere))

    with django_capture_on_commit_callbacks(execute=True):
        alice_client.post(reverse("classification:model_delete", args=[model.pk]))

    assert not MLModel.objects.filter(pk=model.pk).exists()
    assert (elsewhere / "manifest.json").is_file()
