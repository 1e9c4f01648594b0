"""The doctor says how much disk trained models and kept checkpoints use, so growth is seen."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from classification.doctor import check_services
from classification.selectors import artifact_disk_usage

pytestmark = pytest.mark.django_db


def write(path: Path, size: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\0" * size)


def test_disk_use_is_split_into_models_and_checkpoints(settings: Any, tmp_path: Path) -> None:
    settings.MODEL_ARTIFACT_ROOT = tmp_path / "artifacts"
    write(tmp_path / "artifacts" / "model-1" / "model.safetensors", 3 * 2**20)
    write(tmp_path / "artifacts" / "jobs" / "job-4" / "checkpoint-12" / "optimizer.pt", 2**20)
    write(tmp_path / "artifacts" / "jobs" / "job-5" / "checkpoint-3" / "optimizer.pt", 2**20)
    (tmp_path / "artifacts" / "jobs" / "job-6").mkdir()  # an emptied folder holds nothing

    assert artifact_disk_usage() == {"models": 3 * 2**20, "checkpoints": 2 * 2**20,
                                     "job_folders": 2}
    line = next(c for c in check_services() if c.name == "disk used")
    assert line.detail == ("trained models 3 MB; checkpoints kept for resuming 2 MB in "
                           "2 job folder(s)")
