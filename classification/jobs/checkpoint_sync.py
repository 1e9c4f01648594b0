"""Checkpoints that survive their machine: published while training, restored on resume.

Only with shared storage (core/filestore.py). The training child runs a CheckpointSync thread
that publishes the newest complete checkpoint as soon as Trainer has finished writing it, and
records it on the job row; so when the machine dies, `resume_training` on any other node starts
from that checkpoint. The upload runs beside the training: a step never waits for it.

A model search has no checkpoint of its own: what it resumes from is its Optuna study (in the
database) and the best trial of each kind, kept under `trials/<number>/` (with its out-of-fold
probabilities beside it, `trials/<number>.oof.npy`). Those are published as one tree named
TRIALS whenever the set of kept trials changes.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
import uuid
from pathlib import Path

from django.db import DatabaseError, close_old_connections, connection

from classification import paths
from classification.models import TrainingJob
from core import filestore

logger = logging.getLogger(__name__)

POLL_SECONDS = 2.0
TRIALS = "trials"


class CheckpointSync(threading.Thread):
    """Publishes each new complete checkpoint of one job, newest only, from its own thread."""

    def __init__(self, *, job_id: int, output_dir: Path, search: bool, published: str = "",
                 digest: str = "") -> None:
        super().__init__(name=f"checkpoint-sync-{job_id}", daemon=True)
        self.job_id = job_id
        self.output_dir = output_dir
        self.search = search
        # A search's signature is its kept trials, unknown until the first look.
        self.published = "" if search else published
        self.digest = digest
        self.stopped = threading.Event()
        self.lock = threading.Lock()

    def _snapshot(self) -> tuple[Path, list[str] | None, str, str] | None:
        """What to publish now: (folder, its entries to include, row name, signature)."""
        if self.search:
            trials = self.output_dir / TRIALS
            # Kept trials are renamed into place whole; temporary and work folders are not.
            kept = sorted((p.name for p in trials.iterdir() if p.name.isdigit() and p.is_dir()),
                          key=int) if trials.is_dir() else []
            # Each with its out-of-fold probabilities, which its ensemble is judged on.
            kept += [name for n in kept if (trials / (name := f"{n}.oof.npy")).is_file()]
            return (trials, kept, TRIALS, ",".join(kept)) if kept else None
        newest = paths.latest_checkpoint(self.output_dir)
        return (Path(newest), None, Path(newest).name, Path(newest).name) if newest else None

    def sync_once(self) -> bool:
        """Publish what a resume would need if it is new; True when something was published."""
        with self.lock:
            snapshot = self._snapshot()
            if snapshot is None or snapshot[3] == self.published:
                return False
            folder, only, name, signature = snapshot
            try:
                digest = filestore.tree_publish(folder=folder, only=only)
            except FileNotFoundError:
                return False  # rotated away mid-upload (Trainer, a new best): a newer one exists
            superseded = self.digest
            try:
                TrainingJob.objects.filter(pk=self.job_id).update(
                    synced_checkpoint=name, synced_checkpoint_digest=digest)
            except DatabaseError as exc:
                logger.warning("job %s: could not record %s: %s", self.job_id, name, exc)
                close_old_connections()
                return False
            self.published, self.digest = signature, digest
            if superseded and superseded != digest:
                filestore.tree_delete(digest=superseded)
            logger.info("job %s: %s published (%s)", self.job_id, name, digest[:12])
            return True

    def run(self) -> None:
        try:
            while not self.stopped.wait(POLL_SECONDS):
                try:
                    self.sync_once()
                except Exception as exc:  # the next poll tries again; training goes on
                    logger.warning("job %s: checkpoint sync failed: %s", self.job_id, exc)
        finally:
            connection.close()

    def stop(self) -> None:
        """Stop polling and wait for a publish in flight: the training process exits next,
        and a daemon thread killed mid-copy would leave its half-written tree behind."""
        self.stopped.set()
        if self.is_alive():
            self.join(timeout=60)

    def finish(self) -> None:
        """Stop polling and publish what the training left last (the cancel's checkpoint)."""
        self.stop()
        try:
            self.sync_once()
        except Exception as exc:
            logger.warning("job %s: last checkpoint sync failed: %s", self.job_id, exc)


def checkpoint_sync_start(*, job: TrainingJob, output_dir: Path) -> CheckpointSync | None:
    if not filestore.shared_enabled():
        return None
    sync = CheckpointSync(job_id=job.pk, output_dir=output_dir,
                          search=job.ml_model.model_type == "search",
                          published=job.synced_checkpoint, digest=job.synced_checkpoint_digest)
    sync.start()
    return sync


def checkpoint_restore(*, job: TrainingJob, output_dir: Path) -> str | None:
    """Bring the job's published checkpoint into its folder on this node, unless a newer
    complete one is already here; returns the checkpoint's name when it was fetched."""
    name, digest = job.synced_checkpoint, job.synced_checkpoint_digest
    if not (name and digest and filestore.shared_enabled()):
        return None
    if name == TRIALS:
        return _trials_restore(source=filestore.tree_local(digest=digest),
                               trials=output_dir / TRIALS)
    local = paths.latest_checkpoint(output_dir)
    if local and (paths.checkpoint_step(Path(local).name) or 0) >= (
            paths.checkpoint_step(name) or 0):
        return None
    _copy_in(filestore.tree_local(digest=digest), output_dir / name)
    return name


def _trials_restore(*, source: Path, trials: Path) -> str | None:
    """Each kept trial this node lacks (and its out-of-fold probabilities), copied in whole."""
    missing = [p for p in source.iterdir() if not (trials / p.name).exists()]
    for kept in missing:
        _copy_in(kept, trials / kept.name)
    folders = sum(1 for p in missing if p.is_dir())
    return f"{folders} kept trial(s)" if missing else None


def _copy_in(source: Path, target: Path) -> None:
    """Copy a folder (or a file) under a temporary name, then os.replace it in: a resume never
    reads half of one. Whatever stood at `target` (a cut-off save of the same step) is
    replaced."""
    part = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}.part")
    try:
        if source.is_file():
            shutil.copyfile(source, part)
        else:
            shutil.copytree(source, part)
        shutil.rmtree(target, ignore_errors=True)
        os.replace(part, target)
    finally:
        shutil.rmtree(part, ignore_errors=True)


def checkpoint_unpublish(*, job_id: int) -> None:
    """Drop a finished job's published checkpoint: nothing will resume from it."""
    digest = (TrainingJob.objects.filter(pk=job_id)
              .values_list("synced_checkpoint_digest", flat=True).first())
    if digest:
        filestore.tree_delete(digest=digest)
        TrainingJob.objects.filter(pk=job_id).update(synced_checkpoint="",
                                                     synced_checkpoint_digest="")
