"""One training step, four ways: what the [CLS]-only last layer and fused AdamW each buy.

Whole training runs last minutes, and on a shared machine their speed drifts by 10-20% from
one minute to the next, more than these changes are worth. So this times single steps
instead, alternating the variants on every batch (full, cls, full+fused, cls+fused, then the
next batch), so that a slow moment hits them all alike. Each variant is its own copy of the
model with its own AdamW; the batches are the benchmark's demo rows, padded per batch.

  full        the model as loaded, AdamW(foreach=True) (what Trainer's "adamw_torch" runs)
  cls         last layer computes only the [CLS] row (classification/engine/cls_head.py)
  full-fused  AdamW(fused=True) (Trainer's "adamw_torch_fused", the engine's choice)
  cls-fused   both: the engine's step

Usage: python scripts/benchmark_step.py [--model minilm|tiny|DIR] [--steps 12] [--batch 16]
Last line: one JSON object with seconds per variant and speedups over "full".
"""

from __future__ import annotations

import argparse
import copy
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import _bench_common as common
import numpy as np

VARIANTS = ("full", "cls", "full-fused", "cls-fused")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()

    import torch
    import transformers
    from transformers import (
        AutoModelForSequenceClassification,
        AutoTokenizer,
        DataCollatorWithPadding,
    )

    from classification.engine.cls_head import prune_last_layer_to_cls
    from classification.engine.device import plan_device, torch_dtype

    transformers.logging.set_verbosity_error()
    plan = plan_device()
    plan.apply()
    torch.manual_seed(args.seed)
    path = common.model_dir(args.model, Path(tempfile.mkdtemp(prefix="medlitbot-step-")))
    tokenizer = AutoTokenizer.from_pretrained(path)
    train, _, _ = common.load_split(None, 600, args.seed)
    labels = sorted({x for row in train.labels for x in row})
    base = AutoModelForSequenceClassification.from_pretrained(
        path, num_labels=len(labels), problem_type="multi_label_classification",
        ignore_mismatched_sizes=True, attention_probs_dropout_prob=0.0,  # as the engine on CPU
    )
    runs: dict[str, dict[str, Any]] = {}
    for name in VARIANTS:
        model = copy.deepcopy(base).to(plan.device).train()
        if name.startswith("cls"):
            prune_last_layer_to_cls(model)
        fused = name.endswith("fused")
        optimizer = torch.optim.AdamW(
            model.parameters(), lr=1e-5, fused=fused or None, foreach=None if fused else True
        )
        runs[name] = {"model": model, "optimizer": optimizer, "seconds": 0.0}

    from classification.engine.metrics import encode_labels

    encoded = tokenizer(train.texts, truncation=True, max_length=256)
    targets = torch.tensor(encode_labels(train.labels, labels), dtype=torch.float32)
    order = np.random.default_rng(args.seed).permutation(len(train.texts))
    collate = DataCollatorWithPadding(tokenizer)
    batches = [order[i : i + args.batch] for i in range(0, len(order), args.batch)]
    batches = batches[: args.steps + 1]
    for step, batch in enumerate(batches):
        inputs = collate([{k: encoded[k][i] for k in encoded} for i in batch])
        inputs = {k: v.to(plan.device) for k, v in inputs.items()}
        y = targets[batch].to(plan.device)
        for run in runs.values():
            start = time.perf_counter()
            with torch.autocast(plan.device, dtype=torch_dtype(plan.dtype),
                                enabled=plan.dtype != "float32"):  # as Trainer's bf16/fp16
                logits = run["model"](**inputs).logits.float()
            torch.nn.functional.binary_cross_entropy_with_logits(logits, y).backward()
            run["optimizer"].step()
            run["optimizer"].zero_grad(set_to_none=True)
            if plan.device == "cuda":
                torch.cuda.synchronize()
            if step:  # the first step warms caches and packs weights
                run["seconds"] += time.perf_counter() - start

    full = runs["full"]["seconds"]
    print(f"{args.model}, {len(batches) - 1} steps of batch {args.batch} on {plan.device} "
          f"({plan.threads} threads, {plan.dtype})")
    summary: dict[str, Any] = {"model": args.model, "steps": len(batches) - 1,
                               "batch": args.batch, "device": plan.device}
    for name, run in runs.items():
        speedup = full / run["seconds"]
        print(f"{name:11s} {run['seconds']:7.2f} s  {speedup:.3f}x vs full")
        summary[f"{name}_seconds"] = run["seconds"]
        summary[f"{name}_speedup"] = speedup
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
