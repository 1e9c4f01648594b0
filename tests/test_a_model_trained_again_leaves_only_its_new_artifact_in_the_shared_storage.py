"""A model whose artifact is replaced (a resumed search that found a better winner) leaves only
the new tree in the bucket: no row names the old one any more."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from classification.jobs import training
from classification.models import MLModel, TrainingJob
from core import filestore


def _finish(job: TrainingJob, folder: Path) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model.bin").write_bytes(os.urandom(1000))
    digest = filestore.tree_publish(folder=folder)
    TrainingJob.objects.filter(pk=job.pk).update(status=TrainingJob.Status.RUNNING)
    trained = SimpleNamespace(device_plan=None, label_names=["a", "b"], multi_label=False)
    assert training.complete(job, clf=trained, artifact=folder, metrics={}, digest=digest)
    return digest


@pytest.mark.django_db
def test_the_replaced_tree_is_deleted_and_the_new_one_kept(
        shared_storage: Path, slice_dataset: Any, tmp_path: Path) -> None:
    model = MLModel.objects.create(name="s", model_type="search", dataset=slice_dataset,
                                   owner=slice_dataset.owner)
    job = TrainingJob.objects.create(ml_model=model)
    first = _finish(job, tmp_path / "attempt-1")
    second = _finish(job, tmp_path / "attempt-2")
    model.refresh_from_db()
    assert model.artifact_digest == second
    manifests = {p.parent.name for p in (shared_storage / "trees").glob("*/MANIFEST.json")}
    assert manifests == {second}
    assert first != second


@pytest.mark.django_db
def test_deleting_a_model_deletes_its_tree_unless_another_model_has_the_same_bytes(
        shared_storage: Path, slice_dataset: Any, tmp_path: Path,
        django_capture_on_commit_callbacks: Any) -> None:
    from classification.mlmodels.deletion import mlmodel_delete

    models = [MLModel.objects.create(name=f"m{i}", model_type="tfidf_logreg",
                                     dataset=slice_dataset, owner=slice_dataset.owner)
              for i in range(2)]
    digests = [_finish(TrainingJob.objects.create(ml_model=m), tmp_path / m.name) for m in models]
    MLModel.objects.filter(pk=models[1].pk).update(artifact_digest=digests[0])  # same bytes

    def manifests() -> set[str]:
        return {p.parent.name for p in (shared_storage / "trees").glob("*/MANIFEST.json")}

    with django_capture_on_commit_callbacks(execute=True):
        mlmodel_delete(ml_model=MLModel.objects.get(pk=models[0].pk))
    assert digests[0] in manifests()  # the other model still stands on it
    with django_capture_on_commit_callbacks(execute=True):
        mlmodel_delete(ml_model=MLModel.objects.get(pk=models[1].pk))
    assert digests[0] not in manifests()
