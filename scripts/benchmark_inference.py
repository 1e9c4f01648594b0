"""Inference throughput: a plain `transformers.pipeline()` loop vs the engine's predict.

Both run the same saved model on the same texts with the same truncation (max_length from the
model's manifest, 256 by default) and the same torch thread count (the engine's device plan):

  pipeline  pipeline("text-classification", top_k=None, function_to_apply="sigmoid"),
            called once per text, as a user would loop over a file
  engine    load_classifier(dir).predict(texts): one call, length-sorted batches under a
            token budget, torch.inference_mode()

Each side is timed --repeats times, alternating (pipeline, engine, pipeline, engine, ...), so a
burst of load from other processes hits both; texts/s is the best of its repeats and the
speedup the median of the per-round ratios. It also checks that both give the same
probabilities (max absolute difference): the engine runs in its device plan's dtype (bf16 on a
CPU with native bf16 and on CUDA), the pipeline in fp32, so expect differences near 1e-3.

MFU and the ceiling: useful forward FLOPs (non-padding tokens, the last layer's [CLS] row only;
_bench_common.useful_flops) per second over a matmul peak measured at the start, in the
engine's dtype. The ceiling is texts/s at 100% MFU, and the speedup over the pipeline loop it
would give: what this machine allows at all.

The model: --model-dir, an artifact folder written by the engine's save() (for instance by
`scripts/benchmark_training.py --save-engine DIR`), or else a MiniLM fine-tuned here for one
short epoch (the weights' values do not change the speed).

Usage: python scripts/benchmark_inference.py [--model-dir DIR] [--texts 400] [--repeats 3]
Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import _bench_common as common
import numpy as np


def train_quick_model(scratch: Path, seed: int) -> str:
    """One short epoch of the engine on 240 demo rows: enough to have a trained head."""
    from classification.ml_models import TrainConfig, create_classifier

    train, val, _ = common.load_split(None, 300, seed)
    labels = sorted({x for row in train.labels + val.labels for x in row})
    config = TrainConfig(
        model_path=common.model_dir("minilm", scratch), epochs=1, seed=seed, label_names=labels,
        multi_label=True, early_stopping_patience=0,
    )
    clf = create_classifier("custom")
    clf.fit(train, val, config, lambda e: None, lambda: False)
    out = scratch / "model"
    clf.save(str(out))
    return str(out)


def pipeline_loop(pipe: Any, texts: list[str], max_length: int) -> list[dict[str, float]]:
    rows = []
    for text in texts:
        scores = pipe(text, truncation=True, max_length=max_length)
        scores = scores[0] if scores and isinstance(scores[0], list) else scores
        rows.append({s["label"]: s["score"] for s in scores})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model-dir", default=None)
    parser.add_argument("--texts", type=int, default=400)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()

    import datasets
    import psutil
    import torch
    import transformers

    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    datasets.disable_progress_bars()

    from classification.ml_models import load_classifier

    scratch = Path(tempfile.mkdtemp(prefix="medlitbot-infer-"))
    model_dir = args.model_dir or train_quick_model(scratch, args.seed)
    # A seeded sample of the demo rows, in file order (speed does not depend on which).
    data = common.read_challenge_csv(common.demo_csv(None))
    texts = common.sample_rows(data, args.texts, args.seed + 1).texts

    clf: Any = load_classifier(model_dir)
    max_length = int(getattr(clf, "max_length", 256))
    threads = torch.get_num_threads()  # the engine's plan set it when the model loaded
    pipe = transformers.pipeline(
        "text-classification", model=model_dir, tokenizer=model_dir, top_k=None,
        device=0 if torch.cuda.is_available() else -1,
        function_to_apply="sigmoid",
    )
    lengths = [len(ids) for ids in clf.tokenizer(texts, truncation=True,
                                                 max_length=max_length)["input_ids"]]
    peak = common.peak_gflops(clf.device_plan.dtype, threads, seconds=4.0)
    flops_per_text = common.useful_flops(clf.model, lengths, passes=1) / len(texts)
    print(f"model={model_dir}\ntexts={len(texts)} mean tokens={np.mean(lengths):.0f} "
          f"max_length={max_length} threads={threads} "
          f"(physical cores {psutil.cpu_count(logical=False)}) load={psutil.getloadavg()[0]:.1f}")

    pipeline_loop(pipe, texts[:8], max_length)  # warm-up: first calls allocate and pack
    clf.predict(texts[:8])
    pipe_times: list[float] = []
    engine_times: list[float] = []
    pipe_rows: Any = None
    engine_rows: Any = None
    for round_ in range(args.repeats):
        torch.set_num_threads(threads)
        start = time.perf_counter()
        pipe_rows = pipeline_loop(pipe, texts, max_length)
        pipe_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        engine_rows = clf.predict(texts)
        engine_times.append(time.perf_counter() - start)
        print(f"round {round_ + 1}: pipeline {len(texts) / pipe_times[-1]:6.1f} texts/s  "
              f"engine {len(texts) / engine_times[-1]:6.1f} texts/s  "
              f"ratio {pipe_times[-1] / engine_times[-1]:.2f}x", flush=True)

    names = list(clf.label_names)
    p_pipe = np.array([[row[n] for n in names] for row in pipe_rows])
    p_engine = np.array([[row["probabilities"][n] for n in names] for row in engine_rows])
    max_diff = float(np.abs(p_pipe - p_engine).max())
    pipe_tps = len(texts) / min(pipe_times)
    engine_tps = len(texts) / min(engine_times)
    speedup = statistics.median(p / e for p, e in zip(pipe_times, engine_times, strict=True))
    print(f"pipeline loop: {pipe_tps:.1f} texts/s (best of {args.repeats})")
    print(f"engine predict: {engine_tps:.1f} texts/s (best of {args.repeats})")
    print(f"speedup: {speedup:.2f}x (median of per-round ratios); "
          f"max |prob difference| {max_diff:.2e}")
    ceiling = peak * 1e9 / flops_per_text
    mfu = engine_tps / ceiling
    print(f"{clf.device_plan.dtype} matmul peak {peak:.1f} GFLOP/s: engine MFU {mfu * 100:.1f}%, "
          f"pipeline MFU {pipe_tps / ceiling * 100:.1f}%; ceiling {ceiling:.1f} texts/s = "
          f"{ceiling / pipe_tps:.2f}x the pipeline loop")
    print(json.dumps({
        "texts": len(texts), "mean_tokens": float(np.mean(lengths)), "max_length": max_length,
        "threads": threads, "repeats": args.repeats,
        "pipeline_texts_per_second": pipe_tps, "engine_texts_per_second": engine_tps,
        "speedup_vs_pipeline": speedup, "max_abs_prob_diff": max_diff,
        "peak_gflops": peak, "engine_mfu": mfu, "pipeline_mfu": pipe_tps / ceiling,
        "ceiling_texts_per_second": ceiling, "ceiling_speedup_vs_pipeline": ceiling / pipe_tps,
    }))


if __name__ == "__main__":
    main()
