"""The certified stop against the point of 95% recall, per corpus: a table and a JSON line.

For each corpus and seed, one ranked review (screening.simulation.simulate_seed, ranker
``svm``: TF-IDF + linear SVM, balanced classes, refit every 10) serves the app's rules
(``confseq``, the default, and ``confseq_zero``); beside them, the baseline pair: an
ASReview-style review (TF-IDF + naive Bayes, classes balanced by oversampling, one relevant and
one irrelevant record to start, the most likely record next, refit every 10) stopped by
buscarpy's ``calculate_h0`` (Callaghan & Müller-Hansen; it treats the last records of the
ranked order as if drawn at random, an assumption, not a guarantee), tested every 10 records.

Per corpus and rule: mean WSS@95, mean fraction read at 95% recall, mean fraction read at the
stop, their difference (the cost of certifying), runs reaching the recall target, and for the
app's rules the floor: what the sample after the switch would cost if the exact hypergeometric
test at one look (the least any uniform sample can read when it finds nothing) were used.

    nice -n 10 .venv/bin/python scripts/benchmark_stopping.py --seeds 20 \
        --corpus /work/corpora/ADHD.csv [--corpus demo:neurological ...]

A corpus is a CSV with title, abstract and label_abstract_screening (else label_included), or
``demo:LABEL`` for demo_data/medlit_challenge.csv.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

APP_RULES = ("confseq", "confseq_zero", "confseq_beside")


def corpus_load(*, spec: str) -> tuple[str, list[str], np.ndarray]:
    import pandas as pd

    if spec.startswith("demo:"):
        label = spec.split(":", 1)[1]
        frame = pd.read_csv(ROOT / "demo_data" / "medlit_challenge.csv", sep=";",
                            encoding="utf-8-sig")
        truth = frame["group"].fillna("").map(lambda g: label in g.split("|")).to_numpy()
        name = f"demo {label}"
    else:
        frame = pd.read_csv(spec)
        column = ("label_abstract_screening" if "label_abstract_screening" in frame
                  else "label_included")
        truth = frame[column].fillna(0).to_numpy()
        name = Path(spec).stem
    texts = (frame["title"].fillna("") + " " + frame["abstract"].fillna("")).tolist()
    return name, texts, np.asarray(truth, dtype=int)


def exact_sample_floor(*, pool: int, found: int, recall_target: float, alpha: float) -> int:
    """The fewest uniform draws without replacement, all irrelevant, after which one
    hypergeometric test rejects the least count left that would put recall below target."""
    least_left = math.floor(found / recall_target - found) + 1
    miss = 1.0
    for n in range(1, pool + 1):
        miss *= max(0.0, (pool - least_left - (n - 1)) / (pool - (n - 1)))
        if miss <= alpha:
            return n
    return pool


def floors_of(*, order: list[int], ranked: int, truth: np.ndarray, recall_target: float,
              alpha: float) -> dict[str, int]:
    """Records read by a uniform sample's least certificate (exact_sample_floor) switched
    where ``confseq`` switched (floor), and switched at the best point of its ranked phase
    (floor_best_switch, at or after the first point of 95% recall: chosen knowing the truth,
    so no uniform-sample certificate on this ranked order reads less)."""
    total = len(truth)
    found = np.concatenate([[0], np.cumsum(truth[np.asarray(order[:ranked], dtype=int)])])

    def at(s: int) -> int:
        return s + exact_sample_floor(pool=total - s, found=int(found[s]),
                                      recall_target=recall_target, alpha=alpha)

    # From the first point of 95% recall on (before it, the sample would have relevant
    # records to find and the no-hit floor says nothing); every 5th point: the floor moves by
    # less than a record per record read there.
    first = int(np.searchsorted(found, math.ceil(0.95 * int(truth.sum()))))
    best = min((at(s) for s in range(first, ranked + 1, 5)), default=at(ranked))
    return {"floor": at(ranked), "floor_best_switch": min(best, at(ranked))}


def app_runs(*, texts: list[str], truth: np.ndarray, seeds: int, recall_target: float,
             confidence: float) -> dict[str, list[dict[str, float]]]:
    from screening import ranker, simulation

    features = ranker.features_fit(texts=texts, ranker="svm")
    total = len(truth)
    out: dict[str, list[dict[str, float]]] = {
        rule: [] for rule in (*APP_RULES, "floor", "floor_best_switch")}
    for seed in range(seeds):
        runs = simulation.simulate_seed(features=features, truth=truth, seed=seed,
                                        rules=list(APP_RULES), ranker="svm",
                                        recall_target=recall_target, confidence=confidence)
        for rule, (run, _order) in runs.items():
            out[rule].append({"wss": run["wss_at_95"], "at95": 0.95 - run["wss_at_95"],
                              "stop": run["screened_at_stop"],
                              "recall": run["recall_at_stop"]})
        run, order = runs["confseq"]
        for name, stop in floors_of(order=order, ranked=run["ranked_phase"], truth=truth,
                                    recall_target=recall_target, alpha=1 - confidence).items():
            out[name].append({"wss": run["wss_at_95"], "at95": 0.95 - run["wss_at_95"],
                              "stop": stop / total, "recall": float("nan")})
    return out


def asreview_buscar_runs(*, texts: list[str], truth: np.ndarray, seeds: int,
                         recall_target: float, confidence: float) -> list[dict[str, float]]:
    from buscarpy import calculate_h0
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.naive_bayes import MultinomialNB

    from screening.simulation import wss_at

    features = TfidfVectorizer().fit_transform(texts)
    total, relevant = len(truth), int(truth.sum())
    out = []
    for seed in range(seeds):
        rng = np.random.default_rng([seed, 7])
        order = [int(rng.choice(np.flatnonzero(truth == 1))),
                 int(rng.choice(np.flatnonzero(truth == 0)))]
        unread = np.ones(total, dtype=bool)
        unread[order] = False
        stop = None
        while unread.any():
            y = truth[order]
            # ASReview's "double" balance, roughly: the relevant rows repeated to match
            repeat = np.where(y == 1, max(1, round((y == 0).sum() / max(1, y.sum()))), 1)
            rows = np.repeat(np.asarray(order), repeat)
            model = MultinomialNB(alpha=3.822).fit(features[rows], truth[rows])
            scores = model.predict_proba(features)[:, 1]
            candidates = np.flatnonzero(unread)
            batch = candidates[np.argsort(-scores[candidates], kind="stable")[:10]]
            order.extend(int(i) for i in batch)
            unread[batch] = False
            if stop is None and calculate_h0(truth[order], total,
                                             recall_target=recall_target) < 1 - confidence:
                stop = len(order)
                if truth[order].sum() >= math.ceil(0.95 * relevant):
                    break
        stop = stop or total
        wss = wss_at(order=order, truth=truth)
        out.append({"wss": wss, "at95": 0.95 - wss, "stop": stop / total,
                    "recall": float(truth[order[:stop]].sum() / max(1, relevant))})
    return out


def row_of(*, corpus: str, rule: str, runs: list[dict[str, float]],
           recall_target: float) -> dict[str, Any]:
    reached = sum(1 for r in runs if r["recall"] >= recall_target - 1e-9)
    at95 = float(np.mean([r["at95"] for r in runs]))
    stop = float(np.mean([r["stop"] for r in runs]))
    return {"corpus": corpus, "rule": rule, "wss_at_95": round(float(np.mean(
        [r["wss"] for r in runs])), 3), "read_at_95": round(at95, 3),
        "read_at_stop": round(stop, 3), "difference": round(stop - at95, 3),
        "reached": None if rule.startswith("floor") else reached, "runs": len(runs)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", action="append", required=True)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--recall-target", type=float, default=0.95)
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--no-baseline", action="store_true",
                        help="skip the ASReview + buscarpy pair")
    parser.add_argument("--baseline-only", action="store_true",
                        help="only the ASReview + buscarpy pair")
    args = parser.parse_args(argv)
    rows = []
    print("| corpus | rule | WSS@95 | read at 95% | read at stop | difference | reached |")
    print("|---|---|---|---|---|---|---|")
    for spec in args.corpus:
        name, texts, truth = corpus_load(spec=spec)
        per_rule = {} if args.baseline_only else app_runs(
            texts=texts, truth=truth, seeds=args.seeds, recall_target=args.recall_target,
            confidence=args.confidence)
        if not args.no_baseline:
            per_rule["asreview+buscar"] = asreview_buscar_runs(
                texts=texts, truth=truth, seeds=args.seeds, recall_target=args.recall_target,
                confidence=args.confidence)
        label = f"{name} ({len(truth)}, {int(truth.sum())})"
        for rule, runs in per_rule.items():
            row = row_of(corpus=label, rule=rule, runs=runs, recall_target=args.recall_target)
            rows.append(row)
            reached = "-" if row["reached"] is None else f"{row['reached']} of {row['runs']}"
            print(f"| {label} | `{rule}` | {row['wss_at_95']:.3f} | {row['read_at_95']:.3f} | "
                  f"{row['read_at_stop']:.3f} | {row['difference']:+.3f} | {reached} |",
                  flush=True)
    print(json.dumps({"seeds": args.seeds, "rows": rows}))


if __name__ == "__main__":
    main()
