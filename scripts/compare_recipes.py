"""Why the default transformer recipe lost to TF-IDF on single-label data, measured.

The issue's case: a few thousand abstracts, one label each, the "quick" preset of `minilm`
scoring below `tfidf_svm` with the largest class almost never predicted. This script rebuilds
that case from the demo data (the rows that carry exactly one label: ~2,000 abstracts, four
classes, imbalanced), splits it with MedLitBot's own stratified splitter (seed 42, 80/10/10),
and trains each recipe on the same rows. Every transformer row is scored twice on test: with
plain argmax, and with the per-class decision rule tuned on validation (engine/decisions.py).

Usage: python scripts/compare_recipes.py [--recipes old_quick,quick,...] [--limit N]
Last line: one JSON object with every recipe's figures.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DEMO = ROOT / "demo_data" / "medlit_challenge.csv"

QUICK = {"epochs": 1, "batch_size": 8, "max_length": 128, "learning_rate": 5e-5,
         "gradient_accumulation_steps": 2, "early_stopping_patience": 1}
# name -> (model type, settings); "old_quick" is the recipe the issue measured.
RECIPES: dict[str, tuple[str, dict[str, Any]]] = {
    "tfidf_svm": ("tfidf_svm", {}),
    "tfidf_logreg": ("tfidf_logreg", {}),
    "minilm_embed_logreg": ("minilm_embed_logreg", {}),
    "old_quick": ("minilm", {**QUICK, "class_weighted_loss": True}),
    "quick_plain_ce": ("minilm", {**QUICK}),
    "quick_lr2e-4": ("minilm", {**QUICK, "learning_rate": 2e-4}),
    "quick_lr1e-4": ("minilm", {**QUICK, "learning_rate": 1e-4}),
    "quick_lr2e-4_weighted": ("minilm", {**QUICK, "learning_rate": 2e-4,
                                         "class_weighted_loss": True}),
    "quick_2ep_lr1e-4": ("minilm", {**QUICK, "epochs": 2, "learning_rate": 1e-4}),
    "balanced_lr1e-4": ("minilm", {"epochs": 3, "batch_size": 16, "max_length": 256,
                                   "learning_rate": 1e-4, "early_stopping_patience": 2}),
}


def single_label_corpus(limit: int | None) -> tuple[list[str], list[list[str]]]:
    with DEMO.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter=";"))
    texts, labels = [], []
    for row in rows:
        groups = [g.strip() for g in row["group"].split("|") if g.strip()]
        if len(groups) == 1:
            texts.append(f"{row['title']}\n\n{row['abstract']}")
            labels.append(groups)
    if limit:
        texts, labels = texts[:limit], labels[:limit]
    return texts, labels


def splits(texts: list[str], labels: list[list[str]]) -> tuple[Any, Any, Any, list[str]]:
    from classification.engine.types import TextData
    from dataset_management.splitting import split_assign

    names = sorted({row[0] for row in labels})
    matrix = np.array([[int(row[0] == n) for n in names] for row in labels])
    codes = split_assign(label_matrix=matrix, multilabel=False, ratios=(0.8, 0.1, 0.1),
                         seed=42).codes
    parts = [[i for i, c in enumerate(codes) if c == k] for k in range(3)]
    data = [TextData([texts[i] for i in p], [labels[i] for i in p]) for p in parts]
    return data[0], data[1], data[2], names


def score(clf: Any, test: Any) -> dict[str, Any]:
    tuned = clf.evaluate(test)
    offsets, clf.class_offsets = clf.class_offsets, []
    plain = clf.evaluate(test)
    clf.class_offsets = offsets
    recall = {name: round(v["recall"], 3) for name, v in tuned["per_label"].items()}
    return {
        "micro_f1": round(tuned["micro_f1"], 4), "macro_f1": round(tuned["macro_f1"], 4),
        "macro_f1_plain_argmax": round(plain["macro_f1"], 4),
        "micro_f1_plain_argmax": round(plain["micro_f1"], 4),
        "recall": recall, "offsets": [round(v, 2) for v in offsets],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--recipes", default=",".join(RECIPES))
    parser.add_argument("--limit", type=int, default=None, help="first N single-label rows")
    args = parser.parse_args()

    from classification.ml_models import TrainConfig, create_classifier

    train, val, test, names = splits(*single_label_corpus(args.limit))
    counts = {n: sum(row[0] == n for row in train.labels) for n in names}
    print(f"single-label corpus: train/validation/test = {len(train)}/{len(val)}/{len(test)}, "
          f"train counts {counts}", flush=True)
    results: dict[str, Any] = {}
    for name in args.recipes.split(","):
        model_type, settings = RECIPES[name]
        with tempfile.TemporaryDirectory(prefix="medlitbot-recipe-") as scratch:
            config = TrainConfig.from_dict(settings)
            config.label_names, config.multi_label, config.output_dir = names, False, scratch
            clf = create_classifier(model_type)
            start = time.perf_counter()
            clf.fit(train, val, config, lambda e: None, lambda: False)
            seconds = time.perf_counter() - start
            row = {"model_type": model_type, "settings": settings,
                   "fit_seconds": round(seconds, 1), **score(clf, test)}
        results[name] = row
        print(f"{name:22s} micro-F1 {row['micro_f1']:.4f}  macro-F1 {row['macro_f1']:.4f} "
              f"(argmax {row['macro_f1_plain_argmax']:.4f})  recall {row['recall']}  "
              f"fit {seconds:.0f}s", flush=True)
    print(json.dumps({"n": [len(train), len(val), len(test)], "recipes": results}))


if __name__ == "__main__":
    main()
