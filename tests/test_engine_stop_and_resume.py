"""should_stop() ends training within a step, leaves a checkpoint, and training resumes from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from classification.ml_models import TrainConfig, TrainingStopped, create_classifier


def _config(tiny_bert_dir: Path, output_dir: Path, **extra: object) -> TrainConfig:
    return TrainConfig(
        model_path=str(tiny_bert_dir),
        epochs=2,
        batch_size=8,
        learning_rate=1e-2,
        max_length=64,
        output_dir=str(output_dir),
        **extra,
    )


def test_should_stop_ends_training_within_one_step_and_resume_continues_from_the_checkpoint(
    tiny_bert_dir: Path, demo_split: tuple, tmp_path: Path
) -> None:
    train, val, _ = demo_split
    steps: list[int] = []

    def record(event: dict) -> None:
        if event["phase"] == "training" and event.get("step"):
            steps.append(event["step"])

    stop_after = 3
    with pytest.raises(TrainingStopped) as info:
        create_classifier("custom").fit(
            train, val, _config(tiny_bert_dir, tmp_path), record, lambda: len(steps) >= stop_after
        )
    assert max(steps) == stop_after
    checkpoint = info.value.checkpoint_path
    assert checkpoint is not None
    assert Path(checkpoint).name == f"checkpoint-{stop_after}"
    assert (Path(checkpoint) / "trainer_state.json").is_file()

    resumed: list[dict] = []
    clf = create_classifier("custom")
    metrics = clf.fit(
        train,
        val,
        _config(tiny_bert_dir, tmp_path, resume_from_checkpoint=checkpoint),
        resumed.append,
        lambda: False,
    )
    resumed_steps = [e["step"] for e in resumed if e["phase"] == "training" and e.get("step")]
    assert min(resumed_steps) == stop_after + 1
    total = max(e["total_steps"] for e in resumed if e.get("total_steps"))
    assert max(resumed_steps) == total
    assert "macro_f1" in metrics
