"""The [CLS]-only last layer gives the full model's logits and gradients, with less work."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

TEXTS = [
    "cardiac surgery outcomes",
    "a much longer abstract about neoplasms of the liver and their treatment in older patients",
    "x",
]


def _pair(model_dir: Path, attn: str) -> tuple[Any, Any, Any]:
    """The same randomly headed classifier twice, dropout off so both paths are deterministic."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from classification.engine.cls_head import prune_last_layer_to_cls

    torch.manual_seed(0)
    full = AutoModelForSequenceClassification.from_pretrained(
        model_dir,
        num_labels=3,
        attn_implementation=attn,
        attention_probs_dropout_prob=0.0,
        hidden_dropout_prob=0.0,
        ignore_mismatched_sizes=True,
    )
    pruned = copy.deepcopy(full)
    assert prune_last_layer_to_cls(pruned)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    # Padding is the case that matters: the [CLS] query must see the same masked keys.
    inputs = tokenizer(TEXTS, padding=True, return_tensors="pt")
    assert int(inputs["attention_mask"].sum()) < inputs["attention_mask"].numel()
    return full, pruned, inputs


@pytest.mark.parametrize("attn", ["sdpa", "eager"])
def test_pruned_model_predicts_the_same_logits(tiny_bert_dir: Path, attn: str) -> None:
    import torch

    full, pruned, inputs = _pair(tiny_bert_dir, attn)
    with torch.inference_mode():
        expected = full.eval()(**inputs).logits
        got = pruned.eval()(**inputs)
    torch.testing.assert_close(got.logits, expected, rtol=1e-5, atol=1e-6)
    # The last layer really did only the [CLS] row.
    assert pruned.bert.encoder.layer[-1](
        torch.randn(2, 7, full.config.hidden_size), None
    ).shape == (2, 1, full.config.hidden_size)


def test_pruned_model_gets_the_same_gradients(tiny_bert_dir: Path) -> None:
    import torch

    full, pruned, inputs = _pair(tiny_bert_dir, "sdpa")
    for model in (full, pruned):
        model.train()
        model(**inputs).logits.pow(2).sum().backward()
    for (name, a), b in zip(full.named_parameters(), pruned.parameters(), strict=True):
        assert (a.grad is None) == (b.grad is None), name
        if a.grad is not None:
            torch.testing.assert_close(b.grad, a.grad, rtol=1e-4, atol=1e-6, msg=name)


def test_models_it_cannot_prune_are_left_alone(tiny_bert_dir: Path) -> None:
    from transformers import AutoModel, AutoModelForSequenceClassification

    from classification.engine.cls_head import prune_last_layer_to_cls

    encoder = AutoModel.from_pretrained(tiny_bert_dir)  # mean pooling reads every position
    assert not prune_last_layer_to_cls(encoder)
    asked_for_states = AutoModelForSequenceClassification.from_pretrained(
        tiny_bert_dir, output_hidden_states=True
    )
    assert not prune_last_layer_to_cls(asked_for_states)


def test_trained_and_reloaded_transformers_use_the_pruned_layer(
    trained_tiny_bert: tuple, tmp_path: Path
) -> None:
    from classification.ml_models import load_classifier

    clf, _ = trained_tiny_bert
    assert "forward" in vars(clf.model.bert.encoder.layer[-1])
    clf.save(str(tmp_path / "model"))
    loaded = load_classifier(str(tmp_path / "model"))
    assert "forward" in vars(loaded.model.bert.encoder.layer[-1])
    # Pruning touched no weight: the artifact holds the full last layer.
    assert set(loaded.model.state_dict()) == set(clf.model.state_dict())
