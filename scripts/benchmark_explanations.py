"""Latency of one explanation against a plain predict of the same text, per model kind.

"One explanation" is what a click on Explain asks: one label (the most probable) of one real
abstract. For each text the script times classifier.predict([text]) and then
explain(classifier, text, labels=[top label]), alternating, --repeats rounds, and keeps each
one's best round: other processes share these 2 cores and only ever make a timing slower (the
load average is printed). It prints the median and p90 over the texts of each, and of their
per-text ratio.

Models: tfidf_logreg and tfidf_svm trained on the demo file's train split (seconds);
minilm_embed_logreg on --embed-rows train rows; minilm from --minilm-dir (an artifact folder
written by the engine's save()) or else fine-tuned here for one short epoch on --minilm-rows
rows: the weights' values do not change the speed, only max_length (chosen from the training
texts, 256 on the demo data) does. Texts: --texts abstracts drawn from the test split.

Usage: .venv/bin/python scripts/benchmark_explanations.py [--texts 20] [--repeats 3]
       [--minilm-dir DIR] [--skip-embed] [--csv demo_data/medlit_challenge.csv]
Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import _bench_common as common
import numpy as np


def labels_of(*parts: Any) -> list[str]:
    return sorted({label for data in parts for row in data.labels for label in row})


def train(model_type: str, train_data: Any, val: Any, seed: int, **extra: Any) -> Any:
    from classification.ml_models import TrainConfig, create_classifier

    config = TrainConfig(label_names=labels_of(train_data, val), multi_label=True, seed=seed,
                         early_stopping_patience=0, **extra)
    clf = create_classifier(model_type)
    started = time.perf_counter()
    clf.fit(train_data, val, config, lambda _event: None, lambda: False)
    print(f"  trained {model_type} on {len(train_data)} rows in "
          f"{time.perf_counter() - started:.1f} s", flush=True)
    return clf


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def measure(name: str, clf: Any, texts: list[str], repeats: int) -> dict[str, Any]:
    from classification.ml_models import explain

    clf.predict([texts[0]])  # warm: lazy encoder loads, first-call kernel setup
    explain(clf, texts[0])
    predict_s, explain_s, ratios, steps, gaps, tokens = [], [], [], [], [], []
    for text in texts:
        best_predict = best_explain = float("inf")
        for _ in range(repeats):
            started = time.perf_counter()
            prediction = clf.predict([text])[0]
            best_predict = min(best_predict, time.perf_counter() - started)
            top = max(prediction["probabilities"], key=prediction["probabilities"].get)
            started = time.perf_counter()
            result = explain(clf, text, labels=[top])
            best_explain = min(best_explain, time.perf_counter() - started)
        predict_s.append(best_predict)
        explain_s.append(best_explain)
        ratios.append(best_explain / best_predict)
        row = result["explanations"][0]
        if "steps" in row:
            steps.append(row["steps"])
            change = abs(row["score"] - row["base_score"]) or 1.0
            gaps.append(abs(row["delta"]) / change)
        tokenizer = getattr(clf, "tokenizer", None)
        if tokenizer is not None:
            tokens.append(len(tokenizer(text, truncation=True,
                                        max_length=clf.max_length)["input_ids"]))
    summary = {
        "model": name,
        "explain_median_s": statistics.median(explain_s),
        "explain_p90_s": percentile(explain_s, 90),
        "explain_max_s": max(explain_s),
        "predict_median_s": statistics.median(predict_s),
        "predict_p90_s": percentile(predict_s, 90),
        "ratio_median": statistics.median(ratios),
        "ratio_p90": percentile(ratios, 90),
        "under_2s": sum(s < 2.0 for s in explain_s),
        "texts": len(texts),
    }
    if steps:
        summary["ig_steps_median"] = statistics.median(steps)
        summary["ig_relative_gap_median"] = statistics.median(gaps)
    if tokens:
        summary["tokens_median"] = statistics.median(tokens)
        summary["tokens_max"] = max(tokens)
    print(f"{name:22} explain median {summary['explain_median_s'] * 1000:8.1f} ms, "
          f"p90 {summary['explain_p90_s'] * 1000:8.1f} ms | predict median "
          f"{summary['predict_median_s'] * 1000:7.1f} ms | explain/predict median "
          f"{summary['ratio_median']:6.1f}x, p90 {summary['ratio_p90']:6.1f}x | "
          f"{summary['under_2s']}/{len(texts)} under 2 s", flush=True)
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--csv", default=None, help="challenge-format CSV (default: demo)")
    parser.add_argument("--texts", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3, help="rounds per text; best kept")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--minilm-dir", default=None, help="a saved minilm artifact folder")
    parser.add_argument("--minilm-rows", type=int, default=240)
    parser.add_argument("--embed-rows", type=int, default=400)
    parser.add_argument("--skip-embed", action="store_true")
    args = parser.parse_args()

    from classification.engine.device import plan_device

    plan = plan_device()
    load_before = os.getloadavg()
    train_data, val, test = common.load_split(args.csv, None, args.seed)
    rng = np.random.default_rng(args.seed)
    texts = [test.texts[i] for i in rng.choice(len(test), size=args.texts, replace=False)]
    print(f"CPU: {platform.processor() or platform.machine()}, flags {common.cpu_flags()}, "
          f"{os.cpu_count()} cores, torch threads {plan.threads}, dtype {plan.dtype}; "
          f"load average {load_before[0]:.2f} (other processes share these cores)", flush=True)
    print(f"{len(texts)} abstracts from the test split, median "
          f"{statistics.median(len(t) for t in texts):.0f} characters", flush=True)

    results = []
    for model_type in ("tfidf_logreg", "tfidf_svm"):
        results.append(measure(model_type, train(model_type, train_data, val, args.seed), texts,
                               args.repeats))
    with tempfile.TemporaryDirectory(prefix="medlitbot-bench-explain-") as scratch:
        if args.minilm_dir:
            from classification.ml_models import load_classifier

            minilm = load_classifier(args.minilm_dir)
        else:
            few = common.sample_rows(train_data, args.minilm_rows, args.seed)
            minilm = train("minilm", few, val.subset(list(range(min(40, len(val))))), args.seed,
                           epochs=1, output_dir=str(Path(scratch) / "minilm"))
        results.append(measure("minilm", minilm, texts, args.repeats))
        del minilm
    if not args.skip_embed:
        few = common.sample_rows(train_data, args.embed_rows, args.seed)
        embed = train("minilm_embed_logreg", few, val, args.seed)
        results.append(measure("minilm_embed_logreg", embed, texts, args.repeats))
    load_after = os.getloadavg()
    print(f"load average at the end {load_after[0]:.2f}", flush=True)
    print(json.dumps({"cpu_flags": common.cpu_flags(), "threads": plan.threads, "dtype": plan.dtype,
                      "load_average": [load_before[0], load_after[0]], "results": results}))


if __name__ == "__main__":
    main()
