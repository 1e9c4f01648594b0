"""Beat's maintenance runs the steps each app registered in its AppConfig.ready() (core names
none of them), in one stable order, and a step that raises is logged while the others still run."""

from __future__ import annotations

import logging
import os
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from core import registry
from core.maintenance import maintenance_run
from core.models import WorkerPing


def stage_old_upload(media_root: Path, owner_id: int) -> Path:
    folder = media_root / "staging" / str(owner_id) / ("c" * 32)
    folder.mkdir(parents=True)
    (folder / "upload.csv").write_text("title,abstract\nA,B\n")
    two_days_ago = time.time() - 2 * 24 * 3600
    os.utime(folder, (two_days_ago, two_days_ago))
    return folder


def test_the_apps_steps_are_registered_in_their_order_with_cores_own_last() -> None:
    assert [step.name for step in registry.maintenance_steps()] == [
        "stuck_training_jobs", "dead_batches", "dead_evaluations",  # classification
        "leftover_checkpoints",
        "abandoned_staged_uploads", "stale_dataset_imports",  # dataset_management
        "stale_screening_simulations", "stale_screening_ranker_locks",  # screening
        "saved_search_runs",  # literature
        "old_worker_pings", "abandoned_upload_files",  # core
    ]


@pytest.mark.django_db
def test_each_registered_step_runs_and_one_that_raises_stops_none_of_the_others(
    media_root: Path, user, monkeypatch, caplog, settings, tmp_path: Path
) -> None:
    # Artifacts of its own too: other tests' job folders would be swept and counted here.
    settings.MODEL_ARTIFACT_ROOT = str(tmp_path / "artifacts")
    upload = stage_old_upload(media_root, user.pk)
    old = WorkerPing.objects.create(token="old", hostname="box", pid=1)
    WorkerPing.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=2))
    WorkerPing.objects.create(token="new", hostname="box", pid=1)

    def broken() -> str:
        raise RuntimeError("a bug in one kind of cleanup")

    # Registered first of all, so every other step runs after it has failed.
    monkeypatch.setitem(registry._maintenance_steps, "broken",
                        registry.Registered(name="broken", func=broken, order=0))

    with caplog.at_level(logging.INFO, logger="core.maintenance"):
        done = maintenance_run()

    assert done == ["1 abandoned staged upload(s) removed", "1 old worker ping(s) removed"]
    assert not upload.exists()
    assert list(WorkerPing.objects.values_list("token", flat=True)) == ["new"]
    assert "maintenance step broken failed" in caplog.text
    # Every app's own step ran cleanly: a moved import would show up here as a second failure.
    assert caplog.text.count("maintenance step") == 1, caplog.text
    assert "maintenance: 1 abandoned staged upload(s) removed; 1 old worker ping(s)" in caplog.text

    # Idempotent: a second run finds nothing left to do.
    assert maintenance_run() == []
