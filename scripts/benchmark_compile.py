"""Does torch.compile pay off for fine-tuning here? The engine's step, eager against compiled.

The engine's training step (MiniLM, [CLS]-only last layer, attention dropout off as on CPU,
fused AdamW, autocast in the device plan's dtype) on random token ids at a few padded lengths
(each row's real length in the upper half, the rest padding), each length being one compiled
graph (a bounded set of padded lengths is how a training run would use it). For each length:
the cold compile time (the first compiled step minus an eager one, with a fresh inductor
cache), then --steps steps alternating eager and compiled so that a slow moment hits both.
Printed per length: ms per step each way, the speedup, and how many steps the compile needs to
pay for itself ("never" when compiled is not faster).

Usage: python scripts/benchmark_compile.py [--lengths 64,128,256] [--steps 6] [--batch 16]
       [--dtype float32|bfloat16] (default: the device plan's)
Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import tempfile
import time
from typing import Any

import _bench_common as common


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lengths", default="64,128,256")
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--dtype", default=None)
    args = parser.parse_args()
    # A cold cache: what the first job on a machine pays.
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="medlitbot-inductor-")

    import psutil
    import torch
    import transformers
    from transformers import AutoModelForSequenceClassification

    from classification.engine.cls_head import prune_last_layer_to_cls
    from classification.engine.device import plan_device, torch_dtype

    transformers.logging.set_verbosity_error()
    plan = plan_device()
    plan.apply()
    dtype = args.dtype or plan.dtype
    torch.manual_seed(0)
    base = AutoModelForSequenceClassification.from_pretrained(
        common.model_dir("minilm", None), num_labels=4,  # type: ignore[arg-type]
        problem_type="multi_label_classification", attention_probs_dropout_prob=0.0,
    )
    prune_last_layer_to_cls(base)
    print(f"minilm, batch {args.batch}, {plan.threads} threads, {dtype}, "
          f"load {psutil.getloadavg()[0]:.1f}")

    def make(compiled: bool) -> tuple[Any, Any]:
        model = copy.deepcopy(base).train()
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=True)
        return (torch.compile(model, dynamic=False) if compiled else model), optimizer

    def step(model: Any, optimizer: Any, ids: Any, mask: Any, y: Any) -> float:
        start = time.perf_counter()
        with torch.autocast("cpu", dtype=torch_dtype(dtype), enabled=dtype != "float32"):
            logits = model(input_ids=ids, attention_mask=mask).logits.float()
        torch.nn.functional.binary_cross_entropy_with_logits(logits, y).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return time.perf_counter() - start

    eager, compiled = make(False), make(True)
    results: dict[str, Any] = {}
    for length in (int(x) for x in args.lengths.split(",")):
        ids = torch.randint(1000, 20000, (args.batch, length))
        # Padded as a length-grouped batch is: each row's real length in the bucket's upper half.
        real = torch.randint(length // 2, length + 1, (args.batch, 1))
        mask = (torch.arange(length)[None, :] < real).long()
        y = torch.rand(args.batch, 4).round()
        first_eager = step(*eager, ids, mask, y)
        compile_seconds = step(*compiled, ids, mask, y) - first_eager
        times: dict[str, list[float]] = {"eager": [], "compiled": []}
        for _ in range(args.steps):
            times["eager"].append(step(*eager, ids, mask, y))
            times["compiled"].append(step(*compiled, ids, mask, y))
        e, c = min(times["eager"]), min(times["compiled"])
        pays = compile_seconds / (e - c) if e > c else None
        results[str(length)] = {"eager_ms": e * 1e3, "compiled_ms": c * 1e3, "speedup": e / c,
                                "compile_seconds": compile_seconds, "steps_to_pay_off": pays}
        print(f"length {length:4d}: eager {e * 1e3:7.1f} ms, compiled {c * 1e3:7.1f} ms, "
              f"{e / c:.2f}x; compile {compile_seconds:5.1f} s, pays off after "
              f"{'never' if pays is None else f'{pays:.0f} steps'}", flush=True)
    print(json.dumps({"dtype": dtype, "batch": args.batch, "threads": plan.threads,
                      "lengths": results}))


if __name__ == "__main__":
    main()
