"""Hub-only models fail fast, and say how to get them, when this machine is offline."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from classification.engine.loading import resolve_model_dir
from classification.ml_models import ModelUnavailableError, TrainConfig, create_classifier


def test_biobert_without_downloads_fails_immediately_with_how_to_get_it(tmp_path: Path) -> None:
    start = time.monotonic()
    with pytest.raises(ModelUnavailableError) as info:
        resolve_model_dir("biobert", TrainConfig(allow_download=False, model_dir=str(tmp_path)))
    assert time.monotonic() - start < 2.0
    message = str(info.value)
    assert "huggingface-cli download dmis-lab/biobert-base-cased-v1.2" in message
    assert "MEDLITBOT_MODEL_DIR" in message or str(tmp_path) in message or "biobert" in message
    assert "minilm" in message


def test_biobert_with_downloads_allowed_gives_up_within_the_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty cache: nothing to find
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    timeout = 4.0
    events: list[dict] = []
    config = TrainConfig(allow_download=True, download_timeout=timeout, model_dir=str(tmp_path))
    start = time.monotonic()
    with pytest.raises(ModelUnavailableError) as info:
        resolve_model_dir("biobert", config, events.append)
    assert time.monotonic() - start < timeout + 2.0
    assert "huggingface-cli download dmis-lab/biobert-base-cased-v1.2" in str(info.value)
    assert events
    assert events[0]["phase"] == "loading_model"


def test_training_biobert_offline_raises_model_unavailable_before_any_training(
    demo_split: tuple,
) -> None:
    train, val, _ = demo_split
    phases: list[str] = []
    with pytest.raises(ModelUnavailableError):
        create_classifier("biobert").fit(
            train,
            val,
            TrainConfig(allow_download=False),
            lambda e: phases.append(e["phase"]),
            lambda: False,
        )
    assert "training" not in phases
