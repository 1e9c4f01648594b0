"""Multi-label recipes on the same rows: each kind's test micro/macro-F1 and ECE with intervals.

`train`: fits one recipe on a fixed sample of a `title;abstract;group` CSV (iterative
stratification, seed 42: train / validation / test), and writes its test probabilities and
decisions to OUT/<name>.npz; every run of the same corpus and sample scores the same test rows.
`report`: the figures of every .npz in OUT, with 95% bootstrap intervals (1,000 resamples of
the test rows, the same resamples for every recipe).

Usage:
  python scripts/compare_multilabel_recipes.py train --csv PATH --rows 2000 --name minilm \
      --kind minilm --settings '{"epochs": 1, "max_length": 128}' --out DIR
  python scripts/compare_multilabel_recipes.py report --out DIR
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FRACTIONS = (0.6, 0.1, 0.3)  # a large test split: the intervals are the point
ROUNDS = 1000


def _split(csv_path: str, rows: int) -> tuple[Any, Any, Any, list[str]]:
    from classification.engine.data import read_challenge_csv, stratified_split
    from scripts._bench_common import sample_rows

    data = sample_rows(read_challenge_csv(csv_path), rows, 42)
    train, val, test = stratified_split(data, FRACTIONS, seed=42)
    return train, val, test, data.label_space()


def train(args: argparse.Namespace) -> None:
    from classification.engine.metrics import encode_labels
    from classification.ml_models import TrainConfig, create_classifier

    tr, val, test, names = _split(args.csv, args.rows)
    settings = json.loads(args.settings)
    with tempfile.TemporaryDirectory(prefix="medlitbot-ml-recipe-") as scratch:
        config = TrainConfig.from_dict(settings)
        config.label_names, config.multi_label, config.output_dir = names, True, scratch
        clf = create_classifier(args.kind)
        start = time.perf_counter()
        clf.fit(tr, val, config, lambda e: None, lambda: False)
        seconds = time.perf_counter() - start
        prob = clf.predict_proba(test.texts)
    pred = clf._choices(prob, clf.thresholds, clf.class_offsets)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    np.savez(out / f"{args.name}.npz", prob=prob, pred=pred,
             truth=encode_labels(test.labels, names), names=np.array(names),
             meta=json.dumps({"kind": args.kind, "settings": settings, "rows": len(tr),
                              "val": len(val), "test": len(test), "fit_seconds": seconds,
                              "thresholds": clf.thresholds}))
    print(f"{args.name}: fit {seconds:.0f}s on {len(tr)} rows; thresholds {clf.thresholds}")


def _scores(truth: np.ndarray, pred: np.ndarray, prob: np.ndarray) -> tuple[float, ...]:
    from classification.engine.calibration import calibration_events, expected_calibration_error
    from classification.engine.metrics import macro_f1

    tp, p, a = (pred * truth).sum(), pred.sum(), truth.sum()
    micro = 2 * tp / max(1, p + a)
    ece = expected_calibration_error(*calibration_events(prob, truth, True)) or 0.0
    return float(micro), macro_f1(truth, pred), float(ece)


def report(args: argparse.Namespace) -> None:
    files = sorted(Path(args.out).glob("*.npz"))
    rng = np.random.default_rng(0)
    draws: np.ndarray | None = None
    print("| recipe | fit s | micro-F1 | macro-F1 | ECE |\n| --- | --- | --- | --- | --- |")
    for path in files:
        z = np.load(path)
        truth, pred, prob = z["truth"], z["pred"], z["prob"]
        meta = json.loads(str(z["meta"]))
        if draws is None:
            draws = rng.integers(0, len(truth), size=(ROUNDS, len(truth)))
        point = _scores(truth, pred, prob)
        boot = np.array([_scores(truth[d], pred[d], prob[d]) for d in draws])
        low, high = np.percentile(boot, 2.5, axis=0), np.percentile(boot, 97.5, axis=0)
        cells = [f"{v:.3f} ({lo:.3f}-{hi:.3f})" for v, lo, hi in zip(point, low, high,
                                                                    strict=True)]
        print(f"| {path.stem} | {meta['fit_seconds']:.0f} | " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train")
    t.add_argument("--csv", required=True)
    t.add_argument("--rows", type=int, default=2000)
    t.add_argument("--name", required=True)
    t.add_argument("--kind", required=True)
    t.add_argument("--settings", default="{}")
    t.add_argument("--out", required=True)
    r = sub.add_parser("report")
    r.add_argument("--out", required=True)
    args = parser.parse_args()
    train(args) if args.command == "train" else report(args)


if __name__ == "__main__":
    main()
