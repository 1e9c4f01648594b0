"""Inference throughput: a plain `transformers.pipeline()` loop against the engine's paths.

All sides run the same saved model on the same texts with the same truncation (max_length from
the model's manifest, 256 by default) and the same thread count (the engine's device plan):

  pipeline     pipeline("text-classification", top_k=None, function_to_apply="sigmoid"),
               called once per text in fp32, as a user would loop over a file
  engine fp32  load_classifier(dir).predict_proba(texts) forced to fp32: one call,
               length-sorted batches under a token budget, torch.inference_mode()
  engine       the same in the device plan's dtype (bf16 on a CPU with native bf16, else fp32):
               what single articles and the API get
  ort int8     ONNX Runtime's dynamic int8 graph (engine/fast_inference.py, recipe "int8")
  openvino int8
               OpenVINO's static int8 graph, calibrated by NNCF on training texts
               (engine/openvino_int8.py): the first recipe a model is judged on. Both are built
               here from the same model; batches get whichever recipe the model kept at
               training (printed), when it kept its quality on it
  torch int8   torch.ao dynamic int8 quantization of the same model, for comparison only
               (torch 2.13 deprecates it)

Each side is timed --repeats times in alternating rounds, so a burst of load from other
processes hits all; texts/s is the best of its repeats and each speedup the median of the
per-round ratios against the pipeline loop. Fidelity: the largest probability difference of
each side against the engine in fp32, and macro-F1 on the held-out test split of the training
sample for fp32 and for the fast path (each with its own tuned decision rules).

MFU and the ceiling: useful forward FLOPs (non-padding tokens, the last layer's [CLS] row only;
_bench_common.useful_flops) per second over an fp32 matmul peak measured at the start. The
ceiling is texts/s at 100% fp32 MFU: what fp32 arithmetic allows at all, which int8 may pass.

The model: --model-dir, an artifact folder written by the engine's save() (for instance by
`scripts/benchmark_training.py --save-engine DIR`), or else a MiniLM fine-tuned here for one
epoch on --train-rows demo rows.

It prints the CPU's kind (AMX, AVX512-BF16, AVX512, AVX2) and the vector flags it found, since
the speed-ups differ per kind.

Usage: python scripts/benchmark_inference.py [--model-dir DIR] [--texts 400] [--repeats 3]
Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _bench_common as common
import numpy as np


def train_quick_model(scratch: Path, seed: int, rows: int = 300) -> str:
    """One epoch of the engine on a demo sample: a trained head and its fast path."""
    from classification.ml_models import TrainConfig, create_classifier

    train, val, _ = common.load_split(None, rows, seed)
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


def pipeline_loop(pipe: Any, texts: list[str], max_length: int, names: list[str]) -> np.ndarray:
    rows = []
    for text in texts:
        scores = pipe(text, truncation=True, max_length=max_length)
        scores = scores[0] if scores and isinstance(scores[0], list) else scores
        rows.append({s["label"]: s["score"] for s in scores})
    return np.array([[row[n] for n in names] for row in rows])


def in_dtype(clf: Any, dtype: str) -> Callable[[list[str]], np.ndarray]:
    def run(texts: list[str]) -> np.ndarray:
        saved = clf.device_plan.dtype
        clf.device_plan.dtype = dtype
        try:
            return clf.predict_proba(texts)
        finally:
            clf.device_plan.dtype = saved
    return run


def torch_int8(clf: Any) -> Callable[[list[str]], np.ndarray]:
    import warnings

    import torch
    from torch.ao.quantization import quantize_dynamic

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the deprecation notices; the point is the timing
        quantized = quantize_dynamic(copy.deepcopy(clf.model), {torch.nn.Linear},
                                     dtype=torch.qint8)
    twin = copy.copy(clf)
    twin.model = quantized
    twin.device_plan = copy.copy(clf.device_plan)
    twin.device_plan.dtype = "float32"
    return twin.predict_proba


def fast_twin(clf: Any, recipe: str, scratch: Path,
              calibration: list[str]) -> Callable[[list[str]], np.ndarray]:
    """The model's predict_proba_fast on a graph of `recipe` built here, whatever it kept."""
    from classification.engine import fast_inference

    twin = copy.copy(clf)
    twin._fast_file = scratch / recipe / fast_inference.recipe_file(recipe)
    twin._onnx = None
    fast_inference.export_int8(model=clf.model, tokenizer=clf.tokenizer,
                               target=twin._fast_file, recipe=recipe,
                               calibration_texts=calibration, max_length=clf.max_length)
    return twin.predict_proba_fast


def macro_f1_of(clf: Any, texts: list[str], labels: list[list[str]], path: str,
                runs: dict[str, Callable[[list[str]], np.ndarray]]) -> float:
    """Test macro-F1 on one side: "fp32", "standard" (the plan's dtype) or a fast one (with
    the fast path's decision rules)."""
    from classification.engine.metrics import compute_metrics

    fast = path not in ("fp32", "standard")
    prob = runs[path](texts)
    rules = clf.fast_path if fast else {"thresholds": clf.thresholds,
                                        "class_offsets": clf.class_offsets}
    return float(compute_metrics(labels, prob, clf.label_names, clf.multi_label,
                                 rules.get("thresholds"), None,
                                 rules.get("class_offsets"))["macro_f1"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model-dir", default=None)
    parser.add_argument("--train-rows", type=int, default=1500,
                        help="demo rows sampled to train the quick model (80%% train)")
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
    started = time.perf_counter()
    model_dir = args.model_dir or train_quick_model(scratch, args.seed, args.train_rows)
    trained_in = time.perf_counter() - started
    # A seeded sample of the demo rows, in file order (speed does not depend on which).
    data = common.read_challenge_csv(common.demo_csv(None))
    texts = common.sample_rows(data, args.texts, args.seed + 1).texts
    _, _, test = common.load_split(None, args.train_rows, args.seed)

    clf: Any = load_classifier(model_dir)
    if not clf.fast_path_used:
        print(f"note: the model's fast path is not used for batches: "
              f"{clf.fast_path.get('reason')}")
    max_length = int(getattr(clf, "max_length", 256))
    threads = torch.get_num_threads()  # the engine's plan set it when the model loaded
    pipe = transformers.pipeline(
        "text-classification", model=model_dir, tokenizer=model_dir, top_k=None,
        device=0 if torch.cuda.is_available() else -1, function_to_apply="sigmoid",
    )
    lengths = [len(ids) for ids in clf.tokenizer(texts, truncation=True,
                                                 max_length=max_length)["input_ids"]]
    peak = common.matmul_peak_gflops(threads, seconds=4.0)
    flops_per_text = common.useful_flops(clf.model, lengths, passes=1) / len(texts)
    print(f"model={model_dir} (trained here in {trained_in:.0f} s)\n"
          f"texts={len(texts)} mean tokens={np.mean(lengths):.0f} max_length={max_length} "
          f"threads={threads} (physical cores {psutil.cpu_count(logical=False)}) "
          f"plan dtype={clf.device_plan.dtype} load={psutil.getloadavg()[0]:.1f}\n"
          f"cpu kind={common.cpu_kind()} flags={' '.join(common.cpu_flags()) or 'none'}")

    from classification.engine import openvino_int8

    calibration = openvino_int8.calibration_sample(
        common.load_split(None, args.train_rows, args.seed)[0].texts)
    sides: dict[str, Callable[[list[str]], np.ndarray]] = {
        "pipeline": lambda t: pipeline_loop(pipe, t, max_length, list(clf.label_names)),
        "engine fp32": in_dtype(clf, "float32"),
        "engine": clf.predict_proba,
        "ort int8": fast_twin(clf, "int8", scratch, calibration),
        "torch int8": torch_int8(clf),
    }
    if openvino_int8.unavailable_reason() is None:
        sides["openvino int8"] = fast_twin(clf, openvino_int8.RECIPE, scratch, calibration)
    print(f"the model kept the fast path's recipe {clf.fast_path.get('recipe')!r} at "
          f"training: {clf.fast_path.get('reason')}")
    if clf.device_plan.dtype == "float32":
        del sides["engine"]  # the same as engine fp32 on this machine
    if clf.device_plan.device != "cpu":
        # The int8 paths are CPU kernels; on a GPU the standard path is bf16.
        for name in ("ort int8", "openvino int8", "torch int8"):
            sides.pop(name, None)
    times: dict[str, list[float]] = {name: [] for name in sides}
    probs: dict[str, np.ndarray] = {}
    for run in sides.values():
        run(texts[:8])  # warm-up: first calls allocate, pack weights and spin up threads
    for round_ in range(args.repeats):
        line = []
        for name, run in sides.items():
            torch.set_num_threads(threads)
            start = time.perf_counter()
            probs[name] = run(texts)
            times[name].append(time.perf_counter() - start)
            line.append(f"{name} {len(texts) / times[name][-1]:6.1f}")
        print(f"round {round_ + 1} (texts/s): " + "  ".join(line), flush=True)

    ceiling = peak * 1e9 / flops_per_text
    result: dict[str, Any] = {
        "texts": len(texts), "mean_tokens": float(np.mean(lengths)), "max_length": max_length,
        "threads": threads, "repeats": args.repeats, "plan_dtype": clf.device_plan.dtype,
        "cpu_kind": common.cpu_kind(), "cpu_flags": common.cpu_flags(),
        "fp32_peak_gflops": peak, "fp32_ceiling_texts_per_second": ceiling,
        "load_average": psutil.getloadavg()[0], "sides": {},
    }
    for name in sides:
        tps = len(texts) / min(times[name])
        speedup = statistics.median(
            p / e for p, e in zip(times["pipeline"], times[name], strict=True))
        diff = float(np.abs(probs[name] - probs["engine fp32"]).max())
        result["sides"][name] = {"texts_per_second": tps, "speedup_vs_pipeline": speedup,
                                 "max_abs_prob_diff_vs_fp32": diff,
                                 "fp32_mfu": tps / ceiling}
        print(f"{name:13s} {tps:7.1f} texts/s  {speedup:5.2f}x the pipeline loop  "
              f"max |p - p_fp32| {diff:.1e}  fp32-MFU {tps / ceiling * 100:5.1f}%")
    print(f"fp32 matmul peak {peak:.1f} GFLOP/s: ceiling {ceiling:.1f} texts/s = "
          f"{ceiling / result['sides']['pipeline']['texts_per_second']:.2f}x the pipeline loop")
    runs = {"fp32": in_dtype(clf, "float32"), "standard": clf.predict_proba, **sides}
    fast_sides = [n for n in ("openvino int8", "ort int8") if n in sides]
    if len(test) and fast_sides:
        f1_fp32 = macro_f1_of(clf, test.texts, test.labels, "fp32", runs)
        f1_standard = macro_f1_of(clf, test.texts, test.labels, "standard", runs)
        f1_fast = {n: macro_f1_of(clf, test.texts, test.labels, n, runs) for n in fast_sides}
        result.update(test_rows=len(test), test_macro_f1_fp32=f1_fp32,
                      test_macro_f1_standard=f1_standard, test_macro_f1_fast=f1_fast,
                      fast_path=clf.fast_path)
        if clf.device_plan.dtype != "float32":
            print(f"held-out test ({len(test)} rows) macro-F1 on the standard path in "
                  f"{clf.device_plan.dtype}: {f1_standard:.4f} (difference "
                  f"{f1_standard - f1_fp32:+.4f} against fp32)")
        fast_f1 = ", ".join(f"{n} {f:.4f} ({f - f1_fp32:+.4f})" for n, f in f1_fast.items())
        print(f"held-out test ({len(test)} rows) macro-F1: fp32 {f1_fp32:.4f}; {fast_f1}; "
              f"on validation at training: the kept recipe "
              f"{clf.fast_path.get('val_macro_f1', float('nan')):.4f} against "
              f"{clf.fast_path.get('standard_val_macro_f1', float('nan')):.4f}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
