"""/readyz checks the free space on the disks of MEDIA_ROOT, MODEL_ARTIFACT_ROOT and
FILE_CACHE_DIR against READYZ_MIN_FREE_MB: above the disk's free space it answers 503 and names
each folder that is short, by its setting (no path: /readyz answers anyone); below, it is ok."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def free_mb(folder: Path) -> int:
    while not folder.exists():
        folder = folder.parent
    return shutil.disk_usage(folder).free // 2**20


def test_a_minimum_above_the_free_space_fails_readyz_naming_the_folders(settings) -> None:
    settings.READYZ_MIN_FREE_MB = free_mb(Path(settings.MEDIA_ROOT)) + 10 * 1024
    response = Client().get("/readyz")

    assert response.status_code == 503
    body = response.json()
    assert "disk" in body["failing"]
    error = body["checks"]["disk"]["error"]
    for name in ("MEDIA_ROOT", "MODEL_ARTIFACT_ROOT", "FILE_CACHE_DIR"):
        assert f"{name} has " in error
    assert error.endswith(f"MB free, under READYZ_MIN_FREE_MB={settings.READYZ_MIN_FREE_MB}")
    assert str(settings.MEDIA_ROOT) not in response.content.decode()


def test_only_the_folder_on_the_fuller_disk_is_named(settings, tmp_path: Path) -> None:
    # /dev/shm is another filesystem than the tests' folders: give it a minimum it cannot meet
    # while the tests' disk can.
    shm = Path("/dev/shm")
    if not shm.is_dir() or free_mb(shm) == free_mb(tmp_path):
        pytest.skip("needs a second filesystem with a different free space")
    settings.FILE_CACHE_DIR = str(shm / "medlitbot-readyz-test")
    settings.READYZ_MIN_FREE_MB = min(free_mb(shm), free_mb(tmp_path)) + 1
    fuller = "FILE_CACHE_DIR" if free_mb(shm) < free_mb(tmp_path) else "MEDIA_ROOT"
    body = Client().get("/readyz").json()

    assert body["checks"]["disk"]["error"].startswith(f"{fuller} has ")
    assert body["checks"]["disk"]["free_mb"]["FILE_CACHE_DIR"] == free_mb(shm)


def test_enough_free_space_passes_and_shows_the_figures(settings) -> None:
    settings.READYZ_MIN_FREE_MB = 1
    check = Client().get("/readyz").json()["checks"]["disk"]

    assert check["ok"] is True
    assert check["min_free_mb"] == 1
    assert set(check["free_mb"]) == {"MEDIA_ROOT", "MODEL_ARTIFACT_ROOT", "FILE_CACHE_DIR"}
    assert all(mb > 1 for mb in check["free_mb"].values())
