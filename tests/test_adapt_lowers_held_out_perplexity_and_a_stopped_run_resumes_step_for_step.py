"""Continued masked-language-model pretraining (engine/adapt.py) on a tiny corpus: the held-out
perplexity drops, and a run stopped midway then resumed from its checkpoint ends where an
uninterrupted run ends."""

from __future__ import annotations

from pathlib import Path

import pytest

from classification.engine.adapt import EncoderAdapter, heldout_split
from classification.engine.types import TextData, TrainingStopped
from classification.ml_models import TrainConfig


def _config(tiny_bert_dir: Path, output_dir: Path, **extra: object) -> TrainConfig:
    return TrainConfig(model_path=str(tiny_bert_dir), adapt_base="custom", epochs=3,
                       batch_size=8, learning_rate=3e-3, max_length=64, seed=3,
                       output_dir=str(output_dir), **extra)


def test_the_held_out_texts_are_the_same_whatever_their_order() -> None:
    texts = [f"abstract number {i} about a trial" for i in range(60)]
    _, held = heldout_split(texts)
    _, held_reversed = heldout_split(texts[::-1])
    assert sorted(held) == sorted(held_reversed)
    assert len(held) == 3  # 5% of 60
    with pytest.raises(ValueError, match="at least two texts"):
        heldout_split(["one"])


def test_adapting_lowers_perplexity_and_a_resumed_run_matches_an_uninterrupted_one(
    tiny_bert_dir: Path, demo_textdata: TextData, tmp_path: Path
) -> None:
    texts = demo_textdata.texts[:120]
    whole = EncoderAdapter("adapt")
    done = whole.fit_texts(texts, _config(tiny_bert_dir, tmp_path / "whole"),
                           lambda _e: None, lambda: False)
    assert done["perplexity_after"] < 0.8 * done["perplexity_before"], done
    assert done["steps"] == 3 * 15  # 114 training texts in batches of 8, three epochs
    assert done["tokens_per_second"] > 0

    steps: list[int] = []

    def record(event: dict) -> None:
        if event.get("phase") == "training" and event.get("loss") is not None:
            steps.append(int(event["step"]))

    first = EncoderAdapter("adapt")
    with pytest.raises(TrainingStopped) as stopped:
        first.fit_texts(texts, _config(tiny_bert_dir, tmp_path / "split"), record,
                        lambda: len(steps) >= 7)
    checkpoint = stopped.value.checkpoint_path
    assert checkpoint is not None
    assert Path(checkpoint).name == "checkpoint-7"
    assert Path(checkpoint, "trainer_state.json").is_file()

    second = EncoderAdapter("adapt")
    resumed = second.fit_texts(
        texts, _config(tiny_bert_dir, tmp_path / "split", resume_from_checkpoint=checkpoint),
        record, lambda: False)
    assert steps[7] == 8  # the resumed run starts at the step after its checkpoint
    assert resumed["steps"] == done["steps"]
    assert resumed["perplexity_before"] == pytest.approx(done["perplexity_before"], rel=1e-6)
    assert resumed["perplexity_after"] == pytest.approx(done["perplexity_after"], rel=1e-3)
    assert resumed["final_loss"] == pytest.approx(done["final_loss"], rel=1e-3)
