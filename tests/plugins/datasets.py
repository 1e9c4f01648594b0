"""Dataset fixtures: files, an importer bound to the test user, and imported datasets."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import AbstractUser
from django.core.files import File

from dataset_management.models import Dataset
from dataset_management.services import dataset_create_from_upload

ROOT = Path(__file__).resolve().parents[2]
FORMATS = ROOT / "tests" / "fixtures" / "formats"
BAD_INPUTS = ROOT / "tests" / "fixtures" / "bad_inputs"
DEMO_CSV = ROOT / "demo_data" / "medlit_challenge.csv"


def media_files() -> set[str]:
    """Every file under MEDIA_ROOT, so a test can assert that a failed import left none."""
    root = Path(settings.MEDIA_ROOT)
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


@pytest.fixture
def media_root(settings: Any, tmp_path: Path) -> Path:
    """A MEDIA_ROOT of the test's own: rolled-back tests must not leave files for the next."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.MEDIA_ROOT.mkdir()
    return settings.MEDIA_ROOT


@pytest.fixture
def import_file(user: AbstractUser, media_root: Path) -> Callable[..., Dataset]:
    """import_file(path, filename=None, owner=user, **service kwargs) -> Dataset.

    Without project= the dataset joins its owner's personal project, as the service does.
    """

    def run(path: Path, *, filename: str | None = None, **kwargs: Any) -> Dataset:
        kwargs.setdefault("owner", user)
        kwargs.setdefault("name", Path(path).stem)
        with Path(path).open("rb") as f:
            return dataset_create_from_upload(
                uploaded_file=File(f, name=filename or Path(path).name), **kwargs
            )

    return run


@pytest.fixture
def demo_dataset(import_file: Callable[..., Dataset]) -> Dataset:
    """The 2,855-row demo file, imported with zero configuration."""
    return import_file(DEMO_CSV, name="Demo")


@pytest.fixture
def small_dataset(import_file: Callable[..., Dataset]) -> Dataset:
    """12 articles, 3 labels, multi-label: for tests that need a dataset, not its size."""
    return import_file(FORMATS / "comma.csv", name="Small")
