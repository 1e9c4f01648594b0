"""tfidf_logreg's default C against the one before it (issue 39, point 3), on the demo data.

The splits are the app's own: the demo CSV imported through the upload service
(evaluate_quality.import_file), 80/10/10 iterative stratification, for each --seeds split seed
(42 is the app's). The defaults are chosen by 5-fold cross-validation on train + validation of
the app's split, once per --cv-seeds seed; inside each fold, 1/9 of the training rows stand in
for the validation split (calibration and thresholds), as in a real job. Test rows are only
reported, never chosen on. Fit seconds: the whole fit() on the app's split, best of --repeats,
the two C values interleaved in the same run, given as a ratio.

Usage: python scripts/benchmark_tfidf.py [--seeds 42,43,44] [--cv-seeds 0,1,2] [--old-c 10]
Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from evaluate_quality import DEMO, import_file


def fit(train: Any, val: Any, labels: list[str], c: float) -> tuple[Any, float]:
    from classification.ml_models import TrainConfig, create_classifier

    clf = create_classifier("tfidf_logreg")
    config = TrainConfig(label_names=labels, multi_label=True, regularization_c=c)
    start = time.perf_counter()
    clf.fit(train, val, config, lambda e: None, lambda: False)
    return clf, time.perf_counter() - start


def cv_micro(pool: Any, labels: list[str], c: float, seed: int, folds: int) -> list[float]:
    from iterstrat.ml_stratifiers import MultilabelStratifiedKFold, MultilabelStratifiedShuffleSplit

    from classification.engine.metrics import encode_labels

    y = encode_labels(pool.labels, labels)
    scores = []
    for rest, held in MultilabelStratifiedKFold(n_splits=folds, shuffle=True,
                                                random_state=seed).split(y, y):
        inner = MultilabelStratifiedShuffleSplit(n_splits=1, test_size=1 / 9, random_state=seed)
        tr, va = next(inner.split(rest, y[rest]))
        clf, _ = fit(pool.subset(rest[tr].tolist()), pool.subset(rest[va].tolist()), labels, c)
        scores.append(clf.evaluate(pool.subset(held.tolist()))["micro_f1"])
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", default="42,43,44", help="split seeds for the test rows")
    parser.add_argument("--cv-seeds", default="0,1,2")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--old-c", type=float, default=10.0, help="the C before issue 39")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    cv_seeds = [int(s) for s in args.cv_seeds.split(",")]
    scratch = Path(tempfile.mkdtemp(prefix="medlitbot-tfidf-"))
    try:
        splits = {s: import_file(DEMO, scratch, split_seed=s)[1:] for s in seeds}
        from classification.engine.baselines import DEFAULT_C
        from classification.ml_models import TextData

        rows = {"before": args.old_c, "after": DEFAULT_C["tfidf"]}
        out: dict[str, Any] = {name: {"C": c, "cv": {}, "test": {}} for name, c in rows.items()}
        train, val, _test, labels, _multi = splits[seeds[0]]
        pool = TextData(train.texts + val.texts, train.labels + val.labels)
        for seed in cv_seeds:
            for name, c in rows.items():
                f1 = cv_micro(pool, labels, c, seed, args.folds)
                out[name]["cv"][seed] = {"mean": float(np.mean(f1)), "sd": float(np.std(f1))}
                print(f"CV seed {seed} {name:6s} C={c:g}: micro-F1 {np.mean(f1):.4f} "
                      f"+- {np.std(f1):.4f}", flush=True)
        for seed in seeds:
            train, val, test, labels, _multi = splits[seed]
            for name, c in rows.items():
                metrics = fit(train, val, labels, c)[0].evaluate(test)
                out[name]["test"][seed] = {k: metrics[k] for k in ("micro_f1", "macro_f1")}
                print(f"split {seed} test {name:6s} C={c:g}: micro-F1 {metrics['micro_f1']:.4f}"
                      f"  macro-F1 {metrics['macro_f1']:.4f}", flush=True)
        train, val, _test, labels, _multi = splits[seeds[0]]
        times: dict[str, list[float]] = {name: [] for name in rows}
        for _ in range(args.repeats):
            for name, c in rows.items():
                times[name].append(fit(train, val, labels, c)[1])
        for name in rows:
            row = out[name]
            row["cv_mean"] = float(np.mean([v["mean"] for v in row["cv"].values()]))
            for k in ("micro_f1", "macro_f1"):
                row[f"test_{k}_mean"] = float(np.mean([v[k] for v in row["test"].values()]))
            row["fit_seconds"] = min(times[name])
        out["fit_ratio"] = out["after"]["fit_seconds"] / out["before"]["fit_seconds"]
        print("\n| defaults | C | CV micro-F1 per seed (mean +- sd over folds) | test micro-F1 "
              "| test macro-F1 | fit s |\n| --- | --- | --- | --- | --- | --- |")
        for name, c in rows.items():
            row = out[name]
            cv = ", ".join(f"{v['mean']:.4f} +- {v['sd']:.4f}" for v in row["cv"].values())
            tests = [row["test"][s] for s in seeds]
            print(f"| {name} | {c:g} | {cv} (mean {row['cv_mean']:.4f}) | "
                  + ", ".join(f"{t['micro_f1']:.4f}" for t in tests)
                  + f" (mean {row['test_micro_f1_mean']:.4f}) | "
                  + ", ".join(f"{t['macro_f1']:.4f}" for t in tests)
                  + f" (mean {row['test_macro_f1_mean']:.4f}) | {row['fit_seconds']:.2f} |")
        print(f"fit time after / before: {out['fit_ratio']:.2f}x")
        print(json.dumps(out))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
