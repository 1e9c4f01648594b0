"""Turning shared storage on for an install that ran on one machine: one command publishes what
that machine holds, so the other nodes can read its datasets and load its models."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from classification.models import MLModel
from classification.selectors import mlmodel_artifact_dir
from dataset_management.selectors import dataset_rows_file


@pytest.mark.django_db
def test_datasets_and_models_from_before_are_published_once(
        slice_dataset: Any, earlier_model: MLModel, settings: Any, tmp_path: Path,
        request: pytest.FixtureRequest) -> None:
    with pytest.raises(CommandError, match="SHARED_STORAGE_URL is not set"):
        call_command("publish_to_shared_storage")
    request.getfixturevalue("shared_storage")  # from now on, several machines
    gone = MLModel.objects.create(project=earlier_model.project, name="Lost",
                                  model_type="tfidf_logreg", status="trained",
                                  artifact_path=str(tmp_path / "nowhere"))
    out, err = io.StringIO(), io.StringIO()
    call_command("publish_to_shared_storage", stdout=out, stderr=err)
    assert "published 2 dataset file(s) and 1 model(s); 1 not found here" in out.getvalue()
    assert f"model {gone.pk}" in err.getvalue()
    earlier_model.refresh_from_db()
    assert len(earlier_model.artifact_digest) == 64

    # Another node: its own disk and cache, nothing of the first machine's.
    settings.MEDIA_ROOT = str(tmp_path / "node-b" / "media")
    settings.FILE_CACHE_DIR = str(tmp_path / "node-b" / "cache")
    folder = mlmodel_artifact_dir(ml_model=earlier_model)
    assert folder is not None
    assert folder.is_relative_to(tmp_path / "node-b" / "cache")
    assert (folder / "manifest.json").read_text() == '{"model_type": "tfidf_logreg"}'
    assert dataset_rows_file(dataset=slice_dataset).is_relative_to(tmp_path / "node-b" / "cache")

    again = io.StringIO()
    call_command("publish_to_shared_storage", stdout=again, stderr=io.StringIO())
    assert "and 0 model(s)" in again.getvalue()  # a published model is left alone
