"""Fixtures for the job tests: a small real dataset and a model that must come out untouched."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from classification.models import MLModel

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@pytest.fixture
def slice_dataset(import_file: Callable[..., Any]) -> Any:
    """The 200-row demo slice, imported through the real ingestion service."""
    return import_file(FIXTURES / "demo_slice.csv", name="Slice")


@pytest.fixture
def earlier_model(slice_dataset: Any, tmp_path: Path) -> MLModel:
    """A model trained before the test's job; it must come out untouched."""
    artifact = tmp_path / "earlier-model"
    artifact.mkdir()
    (artifact / "manifest.json").write_text('{"model_type": "tfidf_logreg"}')
    return MLModel.objects.create(
        name="Earlier", model_type="tfidf_logreg", dataset=slice_dataset,
        status=MLModel.Status.TRAINED, artifact_path=str(artifact), metrics={"micro_f1": 0.5},
    )
