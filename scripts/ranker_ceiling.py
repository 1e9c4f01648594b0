"""How far the screening ranker is from the best any ranker of its kind could do (issue 36).

WSS@95 of active learning is bounded by how separable the label is. This prints, per label, in
one run:

* ``active``: the session's replay (simulate_seed, the default ranker, cold start, refitted
  every 10), WSS@95 of the ranked order alone, mean over --seeds;
* ``supervised``: a ranker that has seen the labels of 80% of the collection: 5-fold
  cross-validated decision values of the same features and model (and of word pairs with a
  linear SVM, the ELAS u4 family), each record scored by the fold that did not train on it,
  mean over --seeds fold draws;
* ``perfect``: every relevant record first, 0.95 * (1 - prevalence).

When ``supervised`` itself stays under a WSS@95 target, no choice of query strategy or
retraining interval for these features can reach it: the missing reads are records the labels
do not separate from the rest.

    .venv/bin/python scripts/ranker_ceiling.py [--csv PATH] [--label NAME ...] [--seeds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "medlitbot_project.settings_test")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402
from sklearn.model_selection import StratifiedKFold, cross_val_predict  # noqa: E402
from sklearn.svm import LinearSVC  # noqa: E402

from screening import ranker as rankers  # noqa: E402
from screening import simulation, simulation_runs  # noqa: E402

DEMO_LABELS = ("oncological", "hepatorenal", "cardiovascular", "neurological")


def supervised_wss(features: object, truth: np.ndarray, *, c: float, seeds: int) -> float:
    scores = []
    for seed in range(seeds):
        folds = StratifiedKFold(5, shuffle=True, random_state=seed)
        model = LinearSVC(C=c, class_weight="balanced", max_iter=2000)
        values = cross_val_predict(model, features, truth, cv=folds, method="decision_function")
        scores.append(simulation.wss_at(order=list(np.argsort(-values, kind="stable")),
                                        truth=truth))
    return float(np.mean(scores))


def active_wss(features: object, truth: np.ndarray, *, seeds: int) -> float:
    return float(np.mean([
        simulation.simulate_seed(features=features, truth=truth, seed=seed,
                                 rules=["callaghan_spent"])["callaghan_spent"][0][
            "wss_at_95_ranker"]
        for seed in range(seeds)]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--csv", default=str(ROOT / "demo_data" / "medlit_challenge.csv"))
    parser.add_argument("--label", action="append",
                        help="a label of the file's group column (repeatable; default: the "
                             "demo's four), or any name with an included column")
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    for label in args.label or list(DEMO_LABELS):
        started = time.perf_counter()
        texts, truth = simulation_runs.simulation_csv_collection(path=args.csv, label=label)
        words = rankers.features_fit(texts=texts, ranker="svm")
        pairs = rankers.features_fit(texts=texts, ranker="svm-bigram")
        print(json.dumps({
            "label": label, "records": len(truth), "prevalence": round(float(truth.mean()), 3),
            "active": round(active_wss(words, truth, seeds=args.seeds), 3),
            "supervised_words_svm": round(supervised_wss(words, truth, c=0.1,
                                                         seeds=args.seeds), 3),
            "supervised_pairs_svm": round(supervised_wss(pairs, truth, c=1.0,
                                                         seeds=args.seeds), 3),
            "perfect": round(0.95 * (1 - float(truth.mean())), 3),
            "seconds": round(time.perf_counter() - started, 1)}), flush=True)


if __name__ == "__main__":
    main()
