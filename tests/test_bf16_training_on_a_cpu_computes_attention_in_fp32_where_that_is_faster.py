"""PyTorch's CPU attention backward is several times slower in bf16 than in fp32 on some CPUs,
so bf16 training there computes attention in fp32. The fp32 attention gives the standard
attention's outputs and gradients (closer to fp32 than bf16 SDPA), it is switched on only for
bf16 training on a CPU whose measured speedup is worth it, and the trained model goes back to
the standard attention for prediction and for its saved config."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from classification.engine import cpu_attention
from classification.engine.device import DevicePlan
from classification.ml_models import TrainConfig, create_classifier

BF16_CPU = DevicePlan(device="cpu", dtype="bfloat16", threads=1)


def _model(tiny_bert_dir: Path) -> torch.nn.Module:
    return AutoModelForSequenceClassification.from_pretrained(
        tiny_bert_dir, num_labels=2, attn_implementation="sdpa")


def _logits_and_grad(model: torch.nn.Module, batch: dict) -> tuple[torch.Tensor, torch.Tensor]:
    model.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = model(**batch).logits.float()
    logits.sum().backward()
    grad = model.bert.encoder.layer[0].attention.self.query.weight.grad
    return logits.detach(), grad.detach().clone()


def test_fp32_attention_matches_the_standard_attention_forward_and_backward(
    tiny_bert_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tokenizer = AutoTokenizer.from_pretrained(tiny_bert_dir)
    batch = dict(tokenizer(["heart failure in the elderly", "a short one"], padding=True,
                           return_tensors="pt"))
    model = _model(tiny_bert_dir)
    reference = _model(tiny_bert_dir)
    reference.load_state_dict(model.state_dict())

    monkeypatch.setattr(cpu_attention, "fp32_speedup", lambda: 3.0)
    note = cpu_attention.use_for_training(model, BF16_CPU)
    assert note is not None
    assert "3.0x faster" in note
    assert model.config._attn_implementation == cpu_attention.NAME

    logits, grad = _logits_and_grad(model, batch)
    ref_logits, ref_grad = _logits_and_grad(reference, batch)
    assert torch.allclose(logits, ref_logits, atol=0.05)
    assert grad.abs().sum() > 0
    assert torch.allclose(grad, ref_grad, atol=0.05, rtol=0.1)

    cpu_attention.restore(model)
    assert model.config._attn_implementation == cpu_attention.STANDARD


@pytest.mark.parametrize(("plan", "speedup"), [
    (DevicePlan(device="cpu", dtype="float32"), 3.0),
    (DevicePlan(device="cuda", dtype="bfloat16"), 3.0),
    (BF16_CPU, 1.05),
])
def test_the_attention_stays_standard_off_bf16_cpus_and_where_fp32_is_not_faster(
    tiny_bert_dir: Path, monkeypatch: pytest.MonkeyPatch, plan: DevicePlan, speedup: float
) -> None:
    monkeypatch.setattr(cpu_attention, "fp32_speedup", lambda: speedup)
    model = _model(tiny_bert_dir)
    assert cpu_attention.use_for_training(model, plan) is None
    assert model.config._attn_implementation == cpu_attention.STANDARD


def test_the_speedup_is_measured_on_this_machine() -> None:
    speedup = cpu_attention.fp32_speedup(batch=2, heads=2, length=32, head_dim=16)
    assert math.isfinite(speedup)
    assert speedup > 0


def test_a_model_trained_with_fp32_attention_is_saved_with_the_standard_one(
    tiny_bert_dir: Path, demo_split: tuple, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cpu_attention, "fp32_speedup", lambda: 3.0)
    train, val, _ = demo_split
    events: list[dict] = []
    clf = create_classifier("custom", device_plan=DevicePlan(device="cpu", dtype="bfloat16",
                                                             threads=1))
    clf.fit(train, val, TrainConfig(model_path=str(tiny_bert_dir), epochs=1, batch_size=8,
                                    learning_rate=1e-2, max_length=64,
                                    output_dir=str(tmp_path / "run")),
            events.append, lambda: False)
    assert any("attention computed in fp32" in str(e.get("message", "")) for e in events)
    assert clf.model.config._attn_implementation == cpu_attention.STANDARD

    clf.save(str(tmp_path / "model"))
    saved = json.loads((tmp_path / "model" / "config.json").read_text(encoding="utf-8"))
    assert cpu_attention.NAME not in json.dumps(saved)
