"""On a CUDA GPU a small model at batch 16 leaves the GPU idle, so the engine doubles the batch
while the run keeps 200 updates and the activations fit half the free memory, and scales the
learning rate with it. A resumed run keeps the batch its checkpoint trained with, read from the
trainer_state.json a real Trainer wrote. On the CPU, and when the job turns it off, the batch
is the one asked for. (The CUDA figures are in docs/figures/engine.md; this machine has none.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from classification.engine import gpu_batch
from classification.engine.device import plan_device
from classification.ml_models import TrainConfig, TrainingStopped, create_classifier

GIB = 1024**3
MINILM = {"max_length": 256, "hidden": 384, "layers": 6}


def _choose(**overrides: object) -> gpu_batch.BatchChoice:
    kw: dict = {"requested": 16, "learning_rate": 1e-4, "rows": 2263, "epochs": 3,
                "accumulation": 1, "free_bytes": 70 * GIB, **MINILM, **overrides}
    return gpu_batch.choose_batch(**kw)


def test_the_batch_doubles_while_the_run_keeps_two_hundred_updates() -> None:
    choice = _choose()
    # 2,263 rows x 3 epochs: 212 updates at 32, 106 at 64.
    assert choice.batch_size == 32
    assert choice.learning_rate == pytest.approx(2e-4)
    assert "batch 32 instead of 16" in choice.reason
    assert "212 updates" in choice.reason

    assert _choose(rows=20_000).batch_size == gpu_batch.MAX_BATCH
    assert _choose(rows=600, epochs=1).batch_size == 16  # too few updates to spare any
    assert _choose(accumulation=2).batch_size == 16  # each update already takes 32 rows


def test_the_batch_never_outgrows_half_the_free_memory_nor_shrinks_below_the_request() -> None:
    per_sample = gpu_batch.activation_bytes(batch=1, **MINILM)
    assert _choose(rows=20_000, free_bytes=2 * 33 * per_sample).batch_size == 32
    assert _choose(rows=20_000, free_bytes=0).batch_size == 16
    big = _choose(requested=48, rows=100)
    assert (big.batch_size, big.learning_rate) == (48, pytest.approx(1e-4))
    assert "as requested" in big.reason


def _tiny_config(tiny_bert_dir: Path, output_dir: Path, *, epochs: int) -> TrainConfig:
    return TrainConfig(model_path=str(tiny_bert_dir), epochs=epochs, batch_size=8,
                       learning_rate=1e-2, max_length=64, output_dir=str(output_dir))


def test_a_resumed_run_keeps_the_batch_its_checkpoint_trained_with(
    tiny_bert_dir: Path, demo_split: tuple, tmp_path: Path
) -> None:
    train, val, _ = demo_split
    config = _tiny_config(tiny_bert_dir, tmp_path, epochs=2)
    steps: list[int] = []

    def record(event: dict) -> None:
        if event["phase"] == "training" and event.get("step"):
            steps.append(event["step"])

    with pytest.raises(TrainingStopped) as stopped:
        create_classifier("custom").fit(train, val, config, record, lambda: len(steps) >= 2)
    checkpoint = stopped.value.checkpoint_path
    assert checkpoint is not None
    assert gpu_batch.checkpoint_batch(checkpoint) == 8

    choice = _choose(requested=16, rows=20_000, resumed_batch=8)
    assert (choice.batch_size, choice.learning_rate) == (8, pytest.approx(0.5e-4))
    assert "checkpoint" in choice.reason
    assert gpu_batch.checkpoint_batch(None) is None
    assert gpu_batch.checkpoint_batch(str(tmp_path / "no-such-checkpoint")) is None


def test_on_the_cpu_the_job_trains_with_the_batch_it_asked_for(
    tiny_bert_dir: Path, demo_split: tuple, tmp_path: Path
) -> None:
    train, val, _ = demo_split
    config = _tiny_config(tiny_bert_dir, tmp_path, epochs=1)
    events: list[dict] = []
    clf = create_classifier("custom", device_plan=plan_device())
    metrics = clf.fit(train, val, config, events.append, lambda: False)
    assert clf.device_plan.device == "cpu"
    assert "train_batch_size" not in metrics
    assert not any("On the GPU" in str(e.get("message", "")) for e in events)
    assert TrainConfig().fill_gpu is True
