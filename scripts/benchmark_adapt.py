"""Tokens per second of an adapt job's training steps against a fine-tuning's, in one run.

Both train on the same demo rows, at the same batch size and max_length, on the same device
plan: the adapt job (classification/engine/adapt.py: masked-language-model steps, the
vocabulary projection on masked tokens only) and the engine's fine-tuning (TransformerClassifier
with Trainer). They alternate, --rounds times each, so a slow moment on a shared machine hits
both; the medians are reported. Tokens are the non-padding tokens of the batches trained on.
The adapt figure counts step time only (its checkpoint saves and perplexity passes are not
steps); the fine-tuning figure is Trainer's train time with no validation split, which
includes its one end-of-epoch checkpoint save.

Usage: python scripts/benchmark_adapt.py [--model minilm|tiny|DIR] [--rows 400] [--batch 16]
                                         [--max-length 128] [--rounds 2]
Last line: one JSON object (tokens/s of each, their ratio, the model, the CPU flags).
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


def _adapt(path: str, texts: list[str], args: argparse.Namespace, scratch: Path,
           n: int) -> float:
    from classification.engine.adapt import EncoderAdapter
    from classification.ml_models import TrainConfig

    config = TrainConfig(model_path=path, adapt_base="custom", epochs=1, batch_size=args.batch,
                         max_length=args.max_length, learning_rate=1e-4,
                         output_dir=str(scratch / f"adapt-{n}"))
    metrics = EncoderAdapter("adapt").fit_texts(texts, config, lambda _e: None, lambda: False)
    return float(metrics["tokens_per_second"])


def _fine_tune(path: str, train: Any, args: argparse.Namespace, scratch: Path, n: int) -> float:
    from classification.engine.types import TextData
    from classification.ml_models import TrainConfig, create_classifier

    config = TrainConfig(model_path=path, epochs=1, batch_size=args.batch,
                         max_length=args.max_length, learning_rate=1e-4,
                         early_stopping_patience=0, output_dir=str(scratch / f"tune-{n}"))
    clf: Any = create_classifier("custom")
    clf.fit(train, TextData([], []), config, lambda _e: None, lambda: False)
    lengths = clf.tokenizer(train.texts, truncation=True, max_length=clf.max_length)["input_ids"]
    return sum(len(ids) for ids in lengths) / clf.timings["train_seconds"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--rows", type=int, default=400)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()

    from classification.engine.device import plan_device

    scratch = Path(tempfile.mkdtemp(prefix="medlitbot-adapt-bench-"))
    path = common.model_dir(args.model, scratch)
    train, _, _ = common.load_split(None, args.rows, args.seed)
    adapt_rates: list[float] = []
    tune_rates: list[float] = []
    started = time.perf_counter()
    for n in range(args.rounds):
        tune_rates.append(_fine_tune(path, train, args, scratch, n))
        adapt_rates.append(_adapt(path, train.texts, args, scratch, n))
        print(f"round {n + 1}: fine-tuning {tune_rates[-1]:.0f} tokens/s, "
              f"adapt {adapt_rates[-1]:.0f} tokens/s", flush=True)
    adapt, tune = statistics.median(adapt_rates), statistics.median(tune_rates)
    plan = plan_device()
    print(json.dumps({
        "model": args.model, "rows": len(train), "batch": args.batch,
        "max_length": args.max_length, "device": plan.device, "dtype": plan.dtype,
        "cpu_flags": common.cpu_flags(),
        "adapt_tokens_per_second": round(adapt, 1),
        "fine_tune_tokens_per_second": round(tune, 1),
        "adapt_over_fine_tune": round(adapt / tune, 3),
        "rounds": args.rounds, "seconds": round(time.perf_counter() - started, 1),
    }))


if __name__ == "__main__":
    main()
