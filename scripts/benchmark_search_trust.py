#!/usr/bin/env python
"""Whether "Find the best model" can be trusted on a loaded machine: wall time against the
budget, and the winner's test score against the untuned defaults.

On the demo data (the app's stratified 80/10/10 split, seed 42), with two CPU burner processes
running beside it, each search runs with its budget clock started before the search is built
(as a job's counts from its claim), and ends as a job does: the winner scores the test split,
is saved, loaded back and asked for one prediction. The wall time of all that is printed
against the budget (limit: budget + 10%). Baseline in the same run: each candidate fitted once
at its usual settings (the New model form's defaults), scored on the same test split. A
transformer default (minilm) is fitted only with --transformer-defaults (tens of minutes on a
CPU); without it, its line says so.

    .venv/bin/python scripts/benchmark_search_trust.py [--minutes 5 15] [--burners 2]
        [--candidates tfidf_logreg,tfidf_svm,minilm_embed_logreg,minilm]
        [--embedding-cache DIR] [--no-defaults]

Last line: one JSON object with the figures. Process start-up (imports, Django, the child
spawn), which a job's budget also counts, is not in these figures.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _bench_common import load_split

DEFAULT_CANDIDATES = "tfidf_logreg,tfidf_svm,minilm_embed_logreg,minilm"
SCORES = ("micro_f1", "macro_f1")


def burners_start(count: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def burners_stop(burners: list[subprocess.Popen]) -> None:
    for burner in burners:
        burner.kill()
        burner.wait()


def labels_of(train: Any, val: Any) -> list[str]:
    return sorted(set(train.label_space()) | set(val.label_space()))


def search_once(split: tuple[Any, Any, Any], minutes: float, candidates: list[str],
                folder: Path, cache: str | None = None) -> dict[str, Any]:
    """One search, ended as a job ends it; the wall time counts from before the search.
    `cache`: the embedding cache folder (EMBEDDING_CACHE_DIR), or None for none."""
    from classification.engine.search import SearchClassifier
    from classification.ml_models import TrainConfig, load_classifier

    train, val, test = split
    config = TrainConfig.from_dict({"time_budget_minutes": minutes,
                                    "search_candidates": candidates})
    config.label_names, config.multi_label = labels_of(train, val), True
    config.output_dir = str(folder)
    config.embedding_cache_dir = cache
    config.search_clock_start = time.time()
    start = time.perf_counter()
    clf = SearchClassifier()
    metrics = clf.fit(train, val, config, lambda event: None, lambda: False)
    searched = time.perf_counter() - start
    scores = clf.evaluate(test)
    clf.save(str(folder / "model"))
    load_classifier(str(folder / "model")).predict([test.texts[0]], fast=True)
    wall = time.perf_counter() - start
    search = metrics["search"]
    return {"budget_seconds": minutes * 60, "wall_seconds": round(wall, 1),
            "search_seconds": round(searched, 1),
            "within_budget_plus_10pct": wall <= 1.1 * minutes * 60,
            "winner": search["winner"]["model_type"],
            "winner_params": search["winner"]["params"],
            "test": {k: round(float(scores[k]), 4) for k in SCORES},
            "trials": search["trials"], "verdict": search["verdict"], "ended": search["ended"],
            "trial_rows": [{k: row.get(k) for k in ("number", "model_type", "state", "value",
                                                      "seconds", "embeddings", "note")}
                           for row in search.get("trial_rows", [])],
            "not_tried": search["not_tried"]}


def default_once(split: tuple[Any, Any, Any], kind: str, folder: Path) -> dict[str, Any]:
    """The kind at the New model form's defaults, fitted on train, scored on test."""
    from classification.ml_models import TrainConfig, create_classifier

    train, val, test = split
    config = TrainConfig(output_dir=str(folder / kind))
    config.label_names, config.multi_label = labels_of(train, val), True
    start = time.perf_counter()
    clf = create_classifier(kind)
    clf.fit(train, val, config, lambda event: None, lambda: False)
    scores = clf.evaluate(test)
    return {"kind": kind, "fit_seconds": round(time.perf_counter() - start, 1),
            "test": {k: round(float(scores[k]), 4) for k in SCORES}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, nargs="+", default=[5.0, 15.0])
    parser.add_argument("--burners", type=int, default=2)
    parser.add_argument("--candidates", default=DEFAULT_CANDIDATES)
    parser.add_argument("--transformer-defaults", action="store_true")
    parser.add_argument("--embedding-cache", default=None,
                        help="the embedding cache folder every search uses (default: none)")
    parser.add_argument("--no-defaults", action="store_true",
                        help="skip the defaults' fits (a second run of the same split)")
    args = parser.parse_args()
    candidates = args.candidates.split(",")
    split = load_split(None, None, 42)
    from classification.ml_models import get_spec

    burners = burners_start(args.burners)
    results: dict[str, Any] = {"burners": args.burners, "candidates": candidates,
                               "searches": [], "defaults": []}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for kind in [] if args.no_defaults else candidates:
                if get_spec(kind).kind == "transformer" and not args.transformer_defaults:
                    print(f"default {kind}: not fitted (a transformer; --transformer-defaults)")
                    continue
                row = default_once(split, kind, Path(tmp))
                results["defaults"].append(row)
                print(f"default {kind}: test micro-F1 {row['test']['micro_f1']:.4f}, macro-F1 "
                      f"{row['test']['macro_f1']:.4f} ({row['fit_seconds']:.0f} s)", flush=True)
            for minutes in args.minutes:
                row = search_once(split, minutes, candidates, Path(tmp) / f"search-{minutes:g}",
                                  cache=args.embedding_cache)
                results["searches"].append(row)
                ratio = row["wall_seconds"] / row["budget_seconds"]
                print(f"search {minutes:g} min: wall {row['wall_seconds']:.0f} s of "
                      f"{row['budget_seconds']:.0f} s (x{ratio:.2f}); winner {row['winner']} "
                      f"test micro-F1 {row['test']['micro_f1']:.4f}, "
                      f"macro-F1 {row['test']['macro_f1']:.4f}\n  {row['verdict']}\n  "
                      f"ended: {row['ended']} not tried: {row['not_tried']}", flush=True)
    finally:
        burners_stop(burners)
    best = max((d["test"]["macro_f1"] for d in results["defaults"]), default=None)
    for row in results["searches"]:
        row["macro_f1_vs_best_default"] = (None if best is None
                                           else round(row["test"]["macro_f1"] - best, 4))
    print(json.dumps(results))


if __name__ == "__main__":
    main()
