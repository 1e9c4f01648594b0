#!/usr/bin/env python
"""What a model search costs beyond the fits it runs: Optuna's bookkeeping per trial.

On the demo data (stratified 80/10/10), a search over the TF-IDF candidates runs for the given
budget, first with its study in SQLite, then in PostgreSQL (as the app keeps it, when
DATABASE_URL or the local server is reachable). For each storage it prints the trials, the
mean fit time of a trial, and the overhead per trial: everything the search did outside the
candidates' own fit() (asking Optuna, storing the trial, estimates, the leaderboard, saving the
best artifacts), as milliseconds and as a share of the fit time. Baseline in the same run: the
same number of plain fits, with no search around them.

    .venv/bin/python scripts/benchmark_search.py [--minutes 1] [--skip-postgres]

Last line: one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DEMO = ROOT / "demo_data" / "medlit_challenge.csv"
CANDIDATES = ["tfidf_logreg", "tfidf_svm"]
PG_ADMIN = os.environ.get("BENCH_PG_URL", "postgresql://postgres@127.0.0.1:5432/postgres")


def demo() -> tuple[Any, Any, list[str]]:
    from classification.engine.data import read_challenge_csv, stratified_split

    train, val, _ = stratified_split(read_challenge_csv(DEMO), seed=42)
    return train, val, sorted(set(train.label_space()) | set(val.label_space()))


def search_once(train: Any, val: Any, labels: list[str], storage: str, minutes: float,
                folder: Path) -> dict[str, Any]:
    from classification.engine.search import SearchClassifier
    from classification.engine.types import TrainConfig

    config = TrainConfig.from_dict({"time_budget_minutes": minutes,
                                    "search_candidates": CANDIDATES, "search_ensemble": False})
    config.label_names, config.multi_label = labels, True
    config.output_dir, config.search_storage = str(folder), storage
    config.search_study = f"bench-{uuid.uuid4().hex[:8]}"
    clf = SearchClassifier()
    start = time.perf_counter()
    metrics = clf.fit(train, val, config, lambda event: None, lambda: False)
    wall = time.perf_counter() - start
    trials = metrics["search"]["trials"]["complete"]
    fit = clf.timings["trial_seconds"]
    overhead = clf.timings["overhead_seconds"]
    return {"trials": trials, "wall_seconds": round(wall, 2),
            "fit_seconds_per_trial": round(fit / trials, 4),
            "overhead_ms_per_trial": round(1000 * overhead / trials, 1),
            "overhead_share_of_fit": round(overhead / fit, 4),
            "unaccounted_ms_per_trial": round(1000 * (wall - fit - overhead) / trials, 1),
            "winner": metrics["search"]["winner"]["model_type"],
            "winner_validation_macro_f1": round(metrics["search"]["winner"][
                "validation_macro_f1"], 4)}


def plain_fits(train: Any, val: Any, labels: list[str], count: int) -> float:
    """Mean seconds of `count` fits alternating the two candidates at their defaults."""
    from classification.engine.types import TrainConfig
    from classification.ml_models import create_classifier

    times = []
    for i in range(count):
        config = TrainConfig(label_names=labels, multi_label=True)
        clf = create_classifier(CANDIDATES[i % 2])
        start = time.perf_counter()
        clf.fit(train, val, config, lambda event: None, lambda: False)
        times.append(time.perf_counter() - start)
    return statistics.mean(times)


def postgres_url() -> tuple[str, Any] | None:
    """A scratch database for the study, and a function that drops it; None when unreachable."""
    try:
        import psycopg
    except ImportError:
        return None
    name = f"medlitbot_bench_{uuid.uuid4().hex[:8]}"
    try:
        with psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=3) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
    except psycopg.Error as exc:
        print(f"PostgreSQL not reachable ({exc}); SQLite only", flush=True)
        return None

    def drop() -> None:
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    base = PG_ADMIN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+psycopg://", 1)
    return f"{base}/{name}", drop


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=1.0)
    parser.add_argument("--skip-postgres", action="store_true")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}", flush=True)
    train, val, labels = demo()
    print(f"demo data: {len(train)} train, {len(val)} validation rows, {len(labels)} labels; "
          f"candidates {', '.join(CANDIDATES)}; budget {args.minutes:g} min", flush=True)
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="medlitbot-bench-search-") as scratch:
        results["sqlite"] = search_once(train, val, labels,
                                        f"sqlite:///{Path(scratch) / 'study.sqlite3'}",
                                        args.minutes, Path(scratch) / "sqlite")
        print("sqlite:", results["sqlite"], flush=True)
        pg = None if args.skip_postgres else postgres_url()
        if pg is not None:
            url, drop = pg
            try:
                results["postgresql"] = search_once(train, val, labels, url, args.minutes,
                                                    Path(scratch) / "pg")
            finally:
                drop()
            print("postgresql:", results["postgresql"], flush=True)
    baseline = plain_fits(train, val, labels, count=10)
    results["plain_fit_seconds"] = round(baseline, 4)
    for name in ("sqlite", "postgresql"):
        if name in results:
            row = results[name]
            row["search_trial_vs_plain_fit"] = round(
                (row["fit_seconds_per_trial"] + row["overhead_ms_per_trial"] / 1000) / baseline,
                3)
    print(f"plain fit (no search), mean of 10: {baseline:.3f} s", flush=True)
    print(f"load average after: {os.getloadavg()}", flush=True)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
