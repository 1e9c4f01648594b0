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
        [--candidates tfidf_logreg,tfidf_svm,minilm_embed_logreg,tfidf_minilm_svm,minilm]
        [--embedding-cache DIR] [--no-defaults | --defaults tfidf_svm]
        [--csv PATH --heldout-rows N] [--seed 42]

With --csv (title;abstract;group, like the demo file) and --heldout-rows N, N rows drawn at
random (--seed, 42 by default) are kept out of everything the search and the defaults see,
which split the rest 80/10/10 as the app does (the same seed); the test figures are then on
those N rows, as `manage.py evaluate` would score a file of them. A corpus with exactly one
label per row is trained single-label, as the app trains it, and its rows report accuracy too.

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

DEFAULT_CANDIDATES = "tfidf_logreg,tfidf_svm,minilm_embed_logreg,tfidf_minilm_svm,minilm"
SCORES = ("micro_f1", "macro_f1", "accuracy", "ece")


def burners_start(count: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def burners_stop(burners: list[subprocess.Popen]) -> None:
    for burner in burners:
        burner.kill()
        burner.wait()


def labels_of(train: Any, val: Any) -> list[str]:
    return sorted(set(train.label_space()) | set(val.label_space()))


def is_multi_label(*parts: Any) -> bool:
    """Multi-label when some row has more than one label, as the app decides at import
    (dataset_management.services)."""
    return any(len(row) > 1 for part in parts for row in part.labels)


def scored(scores: dict[str, Any]) -> dict[str, float]:
    return {k: round(float(scores[k]), 4) for k in SCORES if scores.get(k) is not None}


def split_with_heldout(csv_path: str | None, heldout: int | None,
                       seed: int = 42) -> tuple[Any, Any, Any]:
    """(train, validation, test): the app's 80/10/10 split, or with `heldout` rows kept out at
    random, the split of the rest with those rows as the test."""
    import random

    from _bench_common import demo_csv

    from classification.engine.data import read_challenge_csv, stratified_split

    if not heldout:
        return load_split(csv_path, None, seed)
    data = read_challenge_csv(demo_csv(csv_path))
    order = list(range(len(data)))
    random.Random(seed).shuffle(order)
    kept, rest = sorted(order[:heldout]), sorted(order[heldout:])
    train, val, _ = stratified_split(data.subset(rest), (0.8, 0.1, 0.1), seed=seed)
    return train, val, data.subset(kept)


def search_once(split: tuple[Any, Any, Any], minutes: float, candidates: list[str],
                folder: Path, cache: str | None = None) -> dict[str, Any]:
    """One search, ended as a job ends it; the wall time counts from before the search.
    `cache`: the embedding cache folder (EMBEDDING_CACHE_DIR), or None for none."""
    from classification.engine.search import SearchClassifier
    from classification.ml_models import TrainConfig, load_classifier

    train, val, test = split
    config = TrainConfig.from_dict({"time_budget_minutes": minutes,
                                    "search_candidates": candidates})
    config.label_names = labels_of(train, val)
    config.multi_label = is_multi_label(train, val)
    config.output_dir = str(folder)
    config.embedding_cache_dir = cache
    config.search_clock_start = time.time()
    start = time.perf_counter()
    clf = SearchClassifier()
    metrics = clf.fit(train, val, config, lambda event: None, lambda: False)
    searched = time.perf_counter() - start
    scores = clf.evaluate(test)
    kept = {kind: scored(model.evaluate(test)) for kind, model in clf.kept.items()}
    clf.save(str(folder / "model"))
    load_classifier(str(folder / "model")).predict([test.texts[0]], fast=True)
    wall = time.perf_counter() - start
    search = metrics["search"]
    return {"budget_seconds": minutes * 60, "wall_seconds": round(wall, 1),
            "search_seconds": round(searched, 1),
            "within_budget_plus_10pct": wall <= 1.1 * minutes * 60,
            "winner": search["winner"]["model_type"],
            "winner_params": search["winner"]["params"],
            "test": scored(scores), "kept_test": kept,
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
    config.label_names = labels_of(train, val)
    config.multi_label = is_multi_label(train, val)
    start = time.perf_counter()
    clf = create_classifier(kind)
    clf.fit(train, val, config, lambda event: None, lambda: False)
    scores = clf.evaluate(test)
    return {"kind": kind, "fit_seconds": round(time.perf_counter() - start, 1),
            "test": scored(scores)}


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
    parser.add_argument("--defaults", default=None,
                        help="the kinds fitted at their defaults (default: the candidates)")
    parser.add_argument("--seed", type=int, default=42,
                        help="the held-out draw's and the split's seed")
    parser.add_argument("--csv", default=None, help="the corpus (default: the demo data)")
    parser.add_argument("--heldout-rows", type=int, default=None,
                        help="rows kept out of the search and scored as the test")
    args = parser.parse_args()
    candidates = args.candidates.split(",")
    split = split_with_heldout(args.csv, args.heldout_rows, seed=args.seed)
    print(f"rows: train {len(split[0])}, validation {len(split[1])}, test {len(split[2])}; "
          f"{'multi' if is_multi_label(*split) else 'single'}-label", flush=True)
    from classification.ml_models import get_spec

    burners = burners_start(args.burners)
    results: dict[str, Any] = {"burners": args.burners, "candidates": candidates,
                               "searches": [], "defaults": []}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            defaults = args.defaults.split(",") if args.defaults else candidates
            for kind in [] if args.no_defaults else defaults:
                if get_spec(kind).kind == "transformer" and not args.transformer_defaults:
                    print(f"default {kind}: not fitted (a transformer; --transformer-defaults)")
                    continue
                row = default_once(split, kind, Path(tmp))
                results["defaults"].append(row)
                print(f"default {kind}: test {row['test']} ({row['fit_seconds']:.0f} s)",
                      flush=True)
            for minutes in args.minutes:
                row = search_once(split, minutes, candidates, Path(tmp) / f"search-{minutes:g}",
                                  cache=args.embedding_cache)
                results["searches"].append(row)
                ratio = row["wall_seconds"] / row["budget_seconds"]
                print(f"search {minutes:g} min: wall {row['wall_seconds']:.0f} s of "
                      f"{row['budget_seconds']:.0f} s (x{ratio:.2f}); winner {row['winner']} "
                      f"test {row['test']}\n  each kind's best on test: {row['kept_test']}\n  "
                      f"{row['verdict']}\n  "
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
