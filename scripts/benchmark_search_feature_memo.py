#!/usr/bin/env python
"""How many TF-IDF trials a search completes in its budget with the feature memo
(classification/engine/feature_memo.py) against without it, in the same run.

Each round runs two searches of the same budget over the same split, one with the memo and one
with each trial fitting its own features (the baseline), in alternating order so a noisy moment
falls on both; the figure is the ratio of their completed trials and of their mean seconds per
trial.

    .venv/bin/python scripts/benchmark_search_feature_memo.py [--minutes 2] [--rounds 2]
        [--candidates tfidf_logreg,tfidf_svm] [--csv PATH --heldout-rows N]

Last line: one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmark_search_trust import is_multi_label, labels_of, split_with_heldout


class NoMemo:
    """The baseline: every fit and transform computed, as before the memo."""

    def __init__(self) -> None:
        self.hits = self.misses = 0

    def fitted(self, *, settings: Any, texts: list[str], fit: Any) -> tuple[Any, Any, None]:
        self.misses += 1
        return (*fit(), None)  # no key: the model transforms with its own vectorizer

    def clear(self) -> None:
        pass


def search(split: tuple[Any, Any, Any], minutes: float, candidates: list[str], folder: Path,
           *, memo: bool) -> dict[str, Any]:
    from classification.engine import search as search_module
    from classification.engine.search import SearchClassifier
    from classification.ml_models import TrainConfig

    train, val, _ = split
    config = TrainConfig.from_dict({"time_budget_minutes": minutes,
                                    "search_candidates": candidates, "search_ensemble": False})
    config.label_names, config.multi_label = labels_of(train, val), is_multi_label(train, val)
    config.output_dir = str(folder)
    config.search_clock_start = time.time()
    real = search_module.FeatureMemo
    if not memo:  # every trial fits its own features, as before the memo
        search_module.FeatureMemo = NoMemo  # type: ignore[assignment,misc]
    try:
        metrics = SearchClassifier().fit(train, val, config, lambda event: None, lambda: False)
    finally:
        search_module.FeatureMemo = real
    rows = [r for r in metrics["search"]["trial_rows"] if r["state"] == "complete"]
    seconds = [float(r["seconds"]) for r in rows if r.get("seconds")]
    return {"memo": memo, "complete": len(rows),
            "seconds_per_trial": round(statistics.fmean(seconds), 2) if seconds else None,
            "best": round(max(float(r["value"]) for r in rows), 4) if rows else None,
            "ended": metrics["search"]["ended"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--candidates", default="tfidf_logreg,tfidf_svm")
    parser.add_argument("--csv", default=None)
    parser.add_argument("--heldout-rows", type=int, default=None)
    args = parser.parse_args()
    split = split_with_heldout(args.csv, args.heldout_rows)
    candidates = args.candidates.split(",")
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for number in range(args.rounds):
            order = (True, False) if number % 2 == 0 else (False, True)
            for memo in order:
                run = search(split, args.minutes, candidates,
                             Path(tmp) / f"{number}-{memo}", memo=memo)
                runs.append(run)
                print(f"round {number + 1}, memo {'on ' if memo else 'off'}: {run['complete']} "
                      f"trials complete, {run['seconds_per_trial']} s each, best "
                      f"{run['best']}", flush=True)

    def mean(key: str, memo: bool) -> float:
        return statistics.fmean(float(r[key]) for r in runs if r["memo"] == memo and r[key])

    summary = {
        "minutes": args.minutes, "rows": len(split[0]) + len(split[1]),
        "candidates": candidates, "rounds": args.rounds,
        "trials_ratio": round(mean("complete", True) / mean("complete", False), 2),
        "seconds_per_trial_ratio": round(mean("seconds_per_trial", True)
                                         / mean("seconds_per_trial", False), 2),
        "runs": runs,
    }
    print(f"trials completed, memo against none: x{summary['trials_ratio']}; seconds per "
          f"trial: x{summary['seconds_per_trial_ratio']}")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
