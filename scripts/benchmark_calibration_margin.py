"""How the calibration selection's margin (engine/calibration_select.Z_MARGIN) trades missed
corrections against harmful ones, on synthetic probabilities whose truth is known.

Each case draws validation rows and 5,000 (multi-label, 4 labels) or 20,000 (single-label,
3 classes) fresh rows from one distribution: the truth's log-odds, and the model's reported
ones sharpened (over-confident), flattened (under-confident) or shifted (biased). The
selection's out-of-fold scores are computed once per seed; each margin then picks a method,
which is fitted on validation and scored on the fresh rows against none. Reported per case and
margin: the seeds whose choice was worse than none on fresh rows by more than 0.005, the worst
such loss, how often none was kept, and the mean ECE gain on the fresh rows.

Usage: python scripts/benchmark_calibration_margin.py [--seeds 20] [--rows 100,286,1000]
       [--margins 0,1,1.5,2,2.5,3] [--brier-route-rows N]
--brier-route-rows: from how many rows a method may also be kept for its Brier gain
(calibration_select.BRIER_ROUTE_ROWS; 1000000000 turns that route off, 0 on at every size).
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from classification.engine import calibration_select as select
from classification.engine.calibration import (
    calibration_events,
    expected_calibration_error,
    fit_calibration,
)

# (name, sharpening of the log-odds, shift of the first label's log-odds)
CASES = (("calibrated", 1.0, 0.0), ("over x1.5", 1.5, 0.0), ("over x3", 3.0, 0.0),
         ("under x0.6", 0.6, 0.0), ("bias +0.5", 1.0, 0.5), ("mild over x1.15", 1.15, 0.0))


def draw(rng: np.random.Generator, n: int, multi_label: bool, sharpen: float,
         shift: float) -> tuple[np.ndarray, np.ndarray]:
    """(reported probabilities, 0/1 truth) of n rows."""
    if multi_label:
        logit = rng.normal(-0.5, 1.5, (n, 4))
        truth = (rng.random((n, 4)) < 1 / (1 + np.exp(-logit))).astype(np.int64)
        return 1 / (1 + np.exp(-(sharpen * logit + shift))), truth
    logit = rng.normal(0, 1.2, (n, 3))
    q = np.exp(logit) / np.exp(logit).sum(axis=1, keepdims=True)
    chosen = (q.cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)
    reported = np.exp(sharpen * logit + np.array([shift, 0.0, 0.0]))
    return reported / reported.sum(axis=1, keepdims=True), np.eye(3, dtype=np.int64)[chosen]


def _ece(prob: np.ndarray, truth: np.ndarray, multi_label: bool) -> float:
    return float(expected_calibration_error(*calibration_events(prob, truth, multi_label)))


def one_seed(seed: int, n: int, multi_label: bool, sharpen: float, shift: float,
             margins: list[float]) -> dict[float, tuple[str, float]]:
    """Per margin: the method chosen and its fresh-row ECE minus none's."""
    rng = np.random.default_rng(1000 * seed + n)
    val_p, val_y = draw(rng, n, multi_label, sharpen, shift)
    new_p, new_y = draw(rng, 5000 if multi_label else 20000, multi_label, sharpen, shift)
    held = {m: select._out_of_fold(val_p, val_y, multi_label, m) for m in select.CANDIDATES}
    scores = select._scores(val_p, val_y, multi_label, held)
    fresh = {m: _ece(fit_calibration(prob=val_p, truth=val_y, multi_label=multi_label,
                                     method=m, checked=False).apply(new_p), new_y, multi_label)
             for m in select.CANDIDATES}
    out = {}
    for margin in margins:
        select.Z_MARGIN = margin
        chosen = select.choose(scores)
        out[margin] = (chosen, fresh[chosen] - fresh["none"])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--rows", default="100,286,1000")
    parser.add_argument("--margins", default="0,1,1.5,2,2.5,3")
    parser.add_argument("--brier-route-rows", type=int, default=select.BRIER_ROUTE_ROWS)
    args = parser.parse_args()
    select.BRIER_ROUTE_ROWS = args.brier_route_rows
    margins = [float(m) for m in args.margins.split(",")]
    rows = [int(n) for n in args.rows.split(",")]
    for multi_label, n, (name, sharpen, shift) in itertools.product((True, False), rows, CASES):
        runs = [one_seed(seed, n, multi_label, sharpen, shift, margins)
                for seed in range(args.seeds)]
        cells = []
        for margin in margins:
            losses = [r[margin][1] for r in runs]
            cells.append(f"Z{margin:g}: worse>0.005 {sum(x > 0.005 for x in losses)}/"
                         f"{args.seeds} worst {max(max(losses), 0):+.4f} none "
                         f"{sum(r[margin][0] == 'none' for r in runs)} meangain "
                         f"{-np.mean(losses):+.4f}")
        kind = "multi" if multi_label else "single"
        print(f"{kind} n={n} {name} " + " | ".join(cells), flush=True)


if __name__ == "__main__":
    main()
