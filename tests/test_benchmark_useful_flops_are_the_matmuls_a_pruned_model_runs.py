"""MFU's numerator: the benchmarks' useful-FLOP formula against torch's own FLOP counter."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
TEXTS = [
    "cardiac surgery outcomes",
    "neoplasms of the liver and their treatment in older patients with chronic disease",
    "a randomised trial of statins after myocardial infarction",
]


def _bench_common() -> Any:
    path = ROOT / "scripts" / "_bench_common.py"
    spec = importlib.util.spec_from_file_location("_bench_common", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _counted_flops(model: Any, tokenizer: Any, *, backward: bool) -> tuple[float, list[int]]:
    """FLOPs torch counts, one text per call so that no padding enters the count."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    total, lengths = 0.0, []
    for text in TEXTS:
        inputs = tokenizer([text], return_tensors="pt")
        lengths.append(int(inputs["input_ids"].shape[1]))
        with FlopCounterMode(display=False) as counter:
            if backward:
                model(**inputs).logits.sum().backward()
            else:
                with torch.no_grad():
                    model(**inputs)
        total += counter.get_total_flops()
    return total, lengths


@pytest.fixture
def classifier(tiny_bert_dir: Path) -> tuple[Any, Any]:
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    # Eager attention: torch's counter sees its matmuls, not the fused CPU SDPA kernel's.
    model = AutoModelForSequenceClassification.from_pretrained(
        tiny_bert_dir, num_labels=4, ignore_mismatched_sizes=True, attn_implementation="eager"
    )
    return model, AutoTokenizer.from_pretrained(tiny_bert_dir)


@pytest.mark.parametrize("backward", [False, True], ids=["forward", "training"])
def test_formula_equals_the_flops_of_a_model_that_skips_the_dead_rows(
    classifier: tuple[Any, Any], backward: bool
) -> None:
    from classification.engine.cls_head import prune_last_layer_to_cls

    model, tokenizer = classifier
    assert prune_last_layer_to_cls(model)
    counted, lengths = _counted_flops(model, tokenizer, backward=backward)
    formula = _bench_common().useful_flops(model, lengths, passes=3 if backward else 1)
    assert counted == pytest.approx(formula, rel=1e-6)


def test_a_full_model_does_more_work_than_counts_as_useful(classifier: tuple[Any, Any]) -> None:
    model, tokenizer = classifier
    counted, lengths = _counted_flops(model, tokenizer, backward=False)
    useful = _bench_common().useful_flops(model, lengths, passes=1)
    # The tiny BERT has 2 layers, so its discarded last-layer rows are a large share.
    assert counted > 1.2 * useful
