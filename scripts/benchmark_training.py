"""Training throughput: the seed recipe vs plain Trainer defaults vs MedLitBot's engine.

One process, one model, the same rows (seeded 80/10/10 split of a seeded sample of the demo
data), the same epochs and learning rate. Runs:

  seed     plain HF Trainer, padding="max_length" 256, batch 4, torch.set_num_threads(1)
  default  plain HF Trainer as a user would write it: pad to 256, batch 8, all threads
  engine   create_classifier(...).fit(...) with its own device plan and defaults

samples/s = training rows x epochs / wall time of the training call (the engine's includes its
per-epoch evaluation and checkpoint saves; the plain runs do neither, so this favours them).
Macro-F1 is measured on the same held-out test rows after training.

MFU = useful training FLOP/s / matmul peak measured at the start of the run, in the dtype the
engine's device plan trains in (fp32 or bf16 on a CPU, bf16/fp16 on CUDA; best of a few GEMM
shapes over a few seconds; the peak is measured again at the end and the JSON also gives MFU
against the larger of the two, since load from other processes only ever lowers a peak). The
plain runs train in fp32 (Trainer's default), so against that same peak their MFU is what the
hardware gave them, not what fp32 could at best reach.
Only non-padding tokens count as useful, truncated at the length each run really used:
  FLOPs per epoch = 6 * N * T  +  12 * d_model * ((n_layers - 1) * sum(len_i ** 2) + sum(len_i))
                    +  6 * H * n
where N = encoder parameters (not embeddings, pooler or head; of the last layer only the key
and value projections, since only its [CLS] row is read), T = useful tokens, n = texts, H =
pooler, head and the rest of the last layer (once per text); 6 = forward (2) + backward (4) per
weight per token; the middle term is the attention score and value matmuls (QK^T and AV:
2 * 2 * len * d per token per layer forward, x3 with backward). All runs are counted alike, so
the plain runs' full last layer is work they do but not useful work
(_bench_common.useful_flops).

The ceiling: samples/s at 100% MFU (peak / useful FLOPs per sample), and the speedup over the
seed recipe that this would give. No run can pass it without skipping useful work, so it says
which targets a machine can reach at all.

On a CUDA machine the seed recipe is skipped unless named in --runs: it hides the GPU
(CUDA_VISIBLE_DEVICES="") by design, so it says nothing about GPU speed.

Usage: python scripts/benchmark_training.py [--model minilm|tiny|DIR] [--rows 600] [--epochs 1]
       [--save-engine DIR]
Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import _bench_common as common
import numpy as np

MAX_LENGTH = 256


def _useful_flops(
    model: Any, tokenizer: Any, texts: list[str], max_length: int = MAX_LENGTH
) -> tuple[float, int]:
    encoded = tokenizer(texts, truncation=True, max_length=max_length)["input_ids"]
    lengths = [len(ids) for ids in encoded]
    return common.useful_flops(model, lengths, passes=3), int(sum(lengths))


def _macro_f1(prob: np.ndarray, y: np.ndarray, thresholds: list[float] | None = None) -> float:
    from sklearn.metrics import f1_score

    from classification.engine.metrics import apply_thresholds

    pred = apply_thresholds(prob, thresholds or [0.5] * prob.shape[1])
    return float(f1_score(y, pred, average="macro", zero_division=0))


def run_plain_trainer(
    name: str, model_path: str, train: Any, test: Any, labels: list[str], *,
    batch: int, threads: int, epochs: int, lr: float, seed: int, scratch: Path,
    device: str = "cpu",
) -> dict[str, Any]:
    """The plain recipe: pad every text to 256 tokens, default sampler, no custom loss."""
    import torch
    import transformers
    from datasets import Dataset
    from transformers import (
        AutoModelForSequenceClassification,
        AutoTokenizer,
        Trainer,
        TrainingArguments,
    )

    from classification.engine.metrics import encode_labels

    torch.set_num_threads(threads)
    transformers.set_seed(seed)
    tokenizer = AutoTokenizer.from_pretrained(model_path)
    model = AutoModelForSequenceClassification.from_pretrained(
        model_path, num_labels=len(labels), problem_type="multi_label_classification",
        ignore_mismatched_sizes=True,
    )
    y_train = encode_labels(train.labels, labels).astype(np.float32)
    ds = Dataset.from_dict({"text": train.texts, "labels": y_train.tolist()})
    ds = ds.map(
        lambda b: tokenizer(
            b["text"], padding="max_length", truncation=True, max_length=MAX_LENGTH
        ),
        batched=True, remove_columns=["text"],
    )
    args = TrainingArguments(
        output_dir=str(scratch / name), per_device_train_batch_size=batch, num_train_epochs=epochs,
        learning_rate=lr, seed=seed, use_cpu=device == "cpu", report_to=[], disable_tqdm=True,
        save_strategy="no", logging_strategy="no",
    )
    trainer = Trainer(model=model, args=args, train_dataset=ds, processing_class=tokenizer)
    start = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - start
    # Prediction the plain way too: pad to 256, batch 8, sigmoid, threshold 0.5.
    model.eval()
    probs = []
    with torch.inference_mode():
        for i in range(0, len(test.texts), 16):
            enc = tokenizer(test.texts[i : i + 16], padding="max_length", truncation=True,
                            max_length=MAX_LENGTH, return_tensors="pt").to(model.device)
            probs.append(torch.sigmoid(model(**enc).logits).float().cpu().numpy())
    prob = np.concatenate(probs)
    flops, tokens = _useful_flops(model, tokenizer, train.texts)
    return {
        "seconds": seconds,
        "samples_per_second": len(train) * epochs / seconds,
        "macro_f1": _macro_f1(prob, encode_labels(test.labels, labels)),
        "useful_flops_per_epoch": flops,
        "useful_tokens_per_epoch": tokens,
        "threads": threads,
        "batch_size": batch,
    }


def run_engine(
    model_path: str, train: Any, val: Any, test: Any, labels: list[str], *,
    epochs: int, lr: float, seed: int, scratch: Path, batch: int | None, save_to: str | None,
    plan: Any, overrides: dict[str, Any] | None = None,
) -> dict[str, Any]:
    from classification.engine.metrics import encode_labels
    from classification.ml_models import TrainConfig, create_classifier
    config = TrainConfig(
        model_path=model_path, epochs=epochs, learning_rate=lr, seed=seed, label_names=labels,
        multi_label=True, output_dir=str(scratch / "engine"), early_stopping_patience=0,
        **(overrides or {}),
    )
    if batch:
        config.batch_size = batch
    clf = create_classifier("custom", device_plan=plan)
    clf.fit(train, val, config, lambda e: None, lambda: False)
    seconds = clf.timings["train_seconds"]
    prob = clf.predict_proba(test.texts)
    flops, tokens = _useful_flops(clf.model, clf.tokenizer, train.texts, clf.max_length)
    if save_to:
        clf.save(save_to)
    return {
        "seconds": seconds,
        "fit_seconds_total": clf.timings["fit_seconds"],
        "samples_per_second": len(train) * epochs / seconds,
        "macro_f1": _macro_f1(prob, encode_labels(test.labels, labels), clf.thresholds),
        # As the plain runs decide: every label at 0.5, no thresholds tuned on validation.
        "macro_f1_at_half": _macro_f1(prob, encode_labels(test.labels, labels)),
        "useful_flops_per_epoch": flops,
        "useful_tokens_per_epoch": tokens,
        "threads": plan.threads,
        "batch_size": clf.metrics.get("train_batch_size", config.batch_size),
        "max_length": clf.max_length,
        "device_plan": plan.as_dict(),
    }


def _json_or_text(value: str) -> Any:
    try:
        return json.loads(value)
    except ValueError:
        return value


def _mean_of(repeats: list[dict[str, Any]]) -> dict[str, Any]:
    """One run's figures over its seeds: the mean of every number, the rest from the first."""
    if len(repeats) == 1:
        return repeats[0]
    merged = dict(repeats[0])
    for key, value in repeats[0].items():
        values = [r[key] for r in repeats]
        if isinstance(value, float) and all(isinstance(v, float) for v in values):
            merged[key] = float(np.mean(values))
    merged["macro_f1_per_seed"] = [r["macro_f1"] for r in repeats]
    merged["samples_per_second_per_seed"] = [r["samples_per_second"] for r in repeats]
    return merged


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="minilm", help="minilm, tiny, or a local HF model dir")
    parser.add_argument("--rows", type=int, default=600)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--engine-batch", type=int, default=None, help="override engine batch")
    parser.add_argument("--runs", default=None, help="default: seed,default,engine (CPU), "
                        "default,engine (CUDA)")
    parser.add_argument("--engine-set", action="append", default=[], metavar="KEY=VALUE",
                        help="a TrainConfig setting for the engine run (JSON value), repeatable")
    parser.add_argument("--repeats", type=int, default=1, help="seeds per run (mean reported)")
    parser.add_argument("--csv", default=None)
    parser.add_argument("--save-engine", default=None, help="save the engine's model here")
    args = parser.parse_args()

    import psutil
    import torch
    import transformers

    # What a user gets without touching threads: read before any run changes it.
    default_threads = torch.get_num_threads()
    on_gpu = torch.cuda.is_available()

    transformers.logging.set_verbosity_error()
    import datasets

    datasets.disable_progress_bars()
    transformers.logging.disable_progress_bar()

    scratch = Path(tempfile.mkdtemp(prefix="medlitbot-bench-"))
    model_path = common.model_dir(args.model, scratch)
    train, val, test = common.load_split(args.csv, args.rows, args.seed)
    labels = sorted({x for row in train.labels + val.labels + test.labels for x in row})
    cores = psutil.cpu_count(logical=False) or 1
    load_start = psutil.getloadavg()[0]
    from classification.engine.device import cpu_has_fast_bf16, matmul_gflops, plan_device

    plan = plan_device()  # once: the engine run trains with this same plan
    engine_dtype = plan.dtype

    peak = common.peak_gflops(engine_dtype, cores)
    print(f"model={args.model} rows={args.rows} train/val/test={len(train)}/{len(val)}/{len(test)} "
          f"epochs={args.epochs} lr={args.lr}")
    where = torch.cuda.get_device_name(0) if on_gpu else f"{cores} threads"
    print(f"{engine_dtype} matmul peak: {peak:.1f} GFLOP/s on {where}; load average "
          f"{load_start:.1f} (other processes share these cores)")
    # Why the engine picks its dtype here: the same small GEMM in both dtypes.
    fp32_256, bf16_256 = matmul_gflops("float32", seconds=1.0), matmul_gflops("bfloat16")
    print(f"256x256 matmul: fp32 {fp32_256:.1f} GFLOP/s, bf16 {bf16_256:.2f} GFLOP/s "
          f"(bf16/fp32 {bf16_256 / max(fp32_256, 1e-9):.2f}x); "
          f"native bf16 flags: {cpu_has_fast_bf16()}")

    overrides = {key: _json_or_text(value) for key, _, value in
                 (item.partition("=") for item in args.engine_set)}
    results: dict[str, dict[str, Any]] = {}
    common_kw = {"epochs": args.epochs, "lr": args.lr, "seed": args.seed, "scratch": scratch}
    runs = args.runs or ("default,engine" if on_gpu else "seed,default,engine")
    device = "cuda" if on_gpu else "cpu"
    for run in runs.split(","):
        repeats = []
        # --repeats N trains each run with seeds seed .. seed+N-1 (same rows): macro-F1 on a
        # few hundred test rows moves by about 0.005 between seeds, so "equal" needs several.
        for seed in range(args.seed, args.seed + args.repeats):
            kw = {**common_kw, "seed": seed}
            start = time.perf_counter()
            with common.GpuUtilisation() as gpu:
                if run == "seed":
                    r = run_plain_trainer("seed", model_path, train, test, labels, batch=4,
                                          threads=1, device="cpu", **kw)
                elif run == "default":
                    r = run_plain_trainer("default", model_path, train, test, labels, batch=8,
                                          threads=default_threads, device=device, **kw)
                else:
                    r = run_engine(model_path, train, val, test, labels, batch=args.engine_batch,
                                   save_to=args.save_engine, plan=plan, overrides=overrides,
                                   **kw)
            r["gpu_utilisation"] = gpu.mean
            r["mfu"] = r["useful_flops_per_epoch"] * args.epochs / r["seconds"] / (peak * 1e9)
            busy = "" if gpu.mean is None else f"  GPU busy {gpu.mean * 100:4.1f}%"
            if "macro_f1_at_half" in r:
                busy += f"  (macro-F1 {r['macro_f1_at_half']:.4f} at 0.5)"
            print(f"{run:8s} {r['samples_per_second']:7.2f} samples/s  macro-F1 "
                  f"{r['macro_f1']:.4f}  MFU {r['mfu'] * 100:5.2f}%{busy}  threads {r['threads']}"
                  f"  batch {r['batch_size']}  seed {seed}  ({time.perf_counter() - start:.0f}s)",
                  flush=True)
            repeats.append(r)
        results[run] = _mean_of(repeats)

    peak_end = common.peak_gflops(engine_dtype, cores)
    load_end = psutil.getloadavg()[0]
    print(f"matmul peak at the end: {peak_end:.1f} GFLOP/s; load average {load_end:.1f}")
    summary: dict[str, Any] = {
        "model": args.model, "rows": args.rows, "epochs": args.epochs, "device": where,
        "engine_dtype": engine_dtype, "peak_gflops": peak,
        "peak_gflops_end": peak_end, "fp32_matmul_256_gflops": fp32_256,
        "bf16_matmul_256_gflops": bf16_256, "load_average_start": load_start,
        "load_average_end": load_end,
    }
    for run, r in results.items():
        summary[f"{run}_samples_per_second"] = r["samples_per_second"]
        summary[f"{run}_macro_f1"] = r["macro_f1"]
        summary[f"{run}_mfu"] = r["mfu"]
        summary[f"{run}_gpu_utilisation"] = r["gpu_utilisation"]
        if "macro_f1_at_half" in r:
            summary[f"{run}_macro_f1_at_half"] = r["macro_f1_at_half"]
        if "macro_f1_per_seed" in r:
            summary[f"{run}_macro_f1_per_seed"] = r["macro_f1_per_seed"]
    if "engine" in results:
        eng = results["engine"]
        summary["mfu"] = eng["mfu"]
        summary["mfu_vs_best_peak"] = eng["mfu"] * peak / max(peak, peak_end)
        summary["engine_max_length"] = eng["max_length"]
        summary["engine_batch_size"] = eng["batch_size"]
        # 100% MFU against the higher peak: the most this machine gives the engine's work.
        ceiling = eng["samples_per_second"] / summary["mfu_vs_best_peak"]
        summary["ceiling_samples_per_second"] = ceiling
        print(f"ceiling (100% MFU): {ceiling:.2f} samples/s")
        for base in ("seed", "default"):
            if base in results:
                ratio = eng["samples_per_second"] / results[base]["samples_per_second"]
                summary[f"speedup_vs_{base}"] = ratio
                summary[f"ceiling_speedup_vs_{base}"] = ceiling / results[base][
                    "samples_per_second"
                ]
                print(f"speedup vs {base}: {ratio:.2f}x (ceiling "
                      f"{summary[f'ceiling_speedup_vs_{base}']:.2f}x)")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
