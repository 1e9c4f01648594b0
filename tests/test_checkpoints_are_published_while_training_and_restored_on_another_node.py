"""What a resume needs is published as it is written, and brought back on another node.

A job's newest complete checkpoint (never a cut-off save) is published and recorded on its row,
the one it supersedes is deleted from the bucket; a search publishes its kept trials instead.
On another node, the restore puts them in the job's folder, where resume looks.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from classification import paths
from classification.jobs import checkpoint_sync
from classification.models import MLModel, TrainingJob


def _job(dataset: Any, model_type: str = "custom") -> TrainingJob:
    model = MLModel.objects.create(name="m", model_type=model_type, dataset=dataset,
                                   owner=dataset.owner)
    return TrainingJob.objects.create(ml_model=model, status=TrainingJob.Status.RUNNING)


def _checkpoint(folder: Path, step: int, *, complete: bool = True) -> Path:
    checkpoint = folder / f"checkpoint-{step}"
    checkpoint.mkdir(parents=True)
    (checkpoint / "model.safetensors").write_bytes(os.urandom(50_000))
    if complete:
        (checkpoint / paths.COMPLETE_MARKER).write_text(f'{{"global_step": {step}}}')
    return checkpoint


def _elsewhere(settings: Any, tmp_path: Path) -> None:
    settings.MODEL_ARTIFACT_ROOT = str(tmp_path / "node-b" / "artifacts")
    settings.FILE_CACHE_DIR = str(tmp_path / "node-b" / "cache")


@pytest.mark.django_db
def test_the_newest_complete_checkpoint_is_published_and_restored_on_another_node(
        shared_storage: Path, settings: Any, slice_dataset: Any, tmp_path: Path) -> None:
    settings.MODEL_ARTIFACT_ROOT = str(tmp_path / "node-a" / "artifacts")
    job = _job(slice_dataset)
    folder = paths.job_output_dir(job.pk)
    sync = checkpoint_sync.CheckpointSync(job_id=job.pk, output_dir=folder, search=False)
    _checkpoint(folder, 10)
    assert sync.sync_once()
    job.refresh_from_db()
    first = job.synced_checkpoint_digest
    assert job.synced_checkpoint == "checkpoint-10"
    _checkpoint(folder, 20, complete=False)  # Trainer still writing it
    assert not sync.sync_once()
    (folder / "checkpoint-20" / paths.COMPLETE_MARKER).write_text('{"global_step": 20}')
    assert sync.sync_once()
    job.refresh_from_db()
    assert job.synced_checkpoint == "checkpoint-20"
    superseded = shared_storage / "trees" / first
    assert not [p for p in superseded.rglob("*") if p.is_file()]  # deleted, every object

    _elsewhere(settings, tmp_path)
    there = paths.job_output_dir(job.pk)
    assert checkpoint_sync.checkpoint_restore(job=job, output_dir=there) == "checkpoint-20"
    assert paths.latest_checkpoint(there) == str(there / "checkpoint-20")
    assert (there / "checkpoint-20" / "model.safetensors").read_bytes() == (
        folder / "checkpoint-20" / "model.safetensors").read_bytes()
    # Run again, it leaves the newer local checkpoint alone.
    assert checkpoint_sync.checkpoint_restore(job=job, output_dir=there) is None

    TrainingJob.objects.filter(pk=job.pk).update(status=TrainingJob.Status.COMPLETED)
    checkpoint_sync.checkpoint_unpublish(job_id=job.pk)
    job.refresh_from_db()
    assert not job.synced_checkpoint_digest
    assert not list((shared_storage / "trees").glob("*/MANIFEST.json"))


@pytest.mark.django_db
def test_a_search_publishes_its_kept_trials_and_never_a_half_written_one(
        shared_storage: Path, settings: Any, slice_dataset: Any, tmp_path: Path) -> None:
    settings.MODEL_ARTIFACT_ROOT = str(tmp_path / "node-a" / "artifacts")
    job = _job(slice_dataset, model_type="search")
    trials = paths.job_output_dir(job.pk) / checkpoint_sync.TRIALS
    for name in ("3", ".4.tmp-x", "5-work"):  # kept, being saved, being trained
        (trials / name).mkdir(parents=True)
        (trials / name / "manifest.json").write_text(name)
    # The kept trial's out-of-fold probabilities go with it; one being written does not.
    (trials / "3.oof.npy").write_bytes(b"3's rows")
    (trials / ".4.oof.npy.partial").write_bytes(b"half")
    sync = checkpoint_sync.CheckpointSync(job_id=job.pk, output_dir=trials.parent, search=True)
    assert sync.sync_once()
    assert not sync.sync_once()  # nothing new kept
    job.refresh_from_db()
    assert job.synced_checkpoint == checkpoint_sync.TRIALS

    _elsewhere(settings, tmp_path)
    there = paths.job_output_dir(job.pk)
    assert checkpoint_sync.checkpoint_restore(job=job, output_dir=there) == "1 kept trial(s)"
    assert sorted(p.name for p in (there / checkpoint_sync.TRIALS).iterdir()) == [
        "3", "3.oof.npy"]
    assert (there / checkpoint_sync.TRIALS / "3" / "manifest.json").read_text() == "3"
    assert (there / checkpoint_sync.TRIALS / "3.oof.npy").read_bytes() == b"3's rows"
