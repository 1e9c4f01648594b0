"""Replay a screening session on a fully labelled collection, for one label (pure, no Django).

The simulated reviewer answers with the collection's own labels. It uses the session's ranker
(screening.ranker) and stopping rule (screening.stopping), in the same phases as a person:

1. cold start: records in random order until the label has one yes and one no;
2. ranked phase: the most likely record first, the ranker refitted every ``every`` decisions;
3. the switch: after ``patience`` irrelevant records in a row the reviewer switches to random
   sampling (any switch rule keeps the guarantee: the test only looks at the random sample);
4. random sampling from the records still unscreened, until p < 1 - confidence (or the pool is
   read to its end).

WSS@95 is (N - n95) / N - 0.05, n95 being the records read, in the session's order, when 95% of
the relevant ones had been found; records the session never read follow in the order of the
last ranking (the order a reviewer who went on would have seen).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from screening import ranker, stopping


def _next_ranked(scores: np.ndarray, unread: np.ndarray, count: int) -> list[int]:
    candidates = np.flatnonzero(unread)
    if len(candidates) <= count:
        return list(candidates[np.argsort(-scores[candidates], kind="stable")])
    top = np.argpartition(-scores[candidates], count)[:count]
    chosen = candidates[top]
    return list(chosen[np.argsort(-scores[chosen], kind="stable")])


def _ranked_phase(features: Any, truth: np.ndarray, rng: np.random.Generator, *,
                  every: int, patience: int) -> tuple[list[int], np.ndarray]:
    total = len(truth)
    unread = np.ones(total, dtype=bool)
    read: list[int] = []
    scores = rng.random(total)  # cold start: random order
    run = 0
    while unread.any() and run < patience:
        batch = (_next_ranked(scores, unread, every) if ranker.can_learn(y=truth[read])
                 else [int(i) for i in rng.permutation(np.flatnonzero(unread))[:1]])
        for index in batch:
            read.append(int(index))
            unread[index] = False
            run = 0 if truth[index] else run + 1
            if run >= patience:
                break
        if ranker.can_learn(y=truth[read]):
            scores = ranker.label_scores(features=features, decided=read, y=truth[read])
    return read, scores


def _sampling_phase(truth: np.ndarray, read: list[int], rng: np.random.Generator, *,
                    recall_target: float, confidence: float) -> dict[str, Any]:
    unread = np.setdiff1d(np.arange(len(truth)), np.asarray(read, dtype=int))
    order = rng.permutation(unread)
    r_al = int(truth[read].sum())
    pool, k, n = len(order), 0, 0
    for n, index in enumerate(order, start=1):
        read.append(int(index))
        k += int(truth[index])
        # p alone each step (cheap); the full state, with its bisections, once at the stop
        if stopping.p_value(pool=pool, sampled=n, k=k, r_al=r_al,
                            recall_target=recall_target) < 1 - confidence:
            break
    return stopping.stop_state(label="", pool=pool, sampled=n, k=k, r_al=r_al,
                               recall_target=recall_target, confidence=confidence).as_dict()


def wss_at(*, order: list[int], truth: np.ndarray, recall: float = 0.95) -> float:
    total, relevant = len(truth), int(truth.sum())
    needed = math.ceil(recall * relevant)
    found = np.cumsum(truth[np.asarray(order, dtype=int)])
    n_at = int(np.searchsorted(found, needed) + 1) if needed else 0
    return (total - n_at) / total - (1 - recall)


def simulate_trace(*, features: Any, truth: np.ndarray, seed: int,
                   recall_target: float = 0.95, confidence: float = 0.95, every: int = 10,
                   patience: int = 50, reviewers: int = 1) -> tuple[dict[str, Any], list[int]]:
    """One replay: the figures the command prints for its seed, and the full reading order
    (the records read to the stop, then the unread ones in the last ranking's order)."""
    truth = np.asarray(truth, dtype=int)
    rng = np.random.default_rng(seed)
    read, scores = _ranked_phase(features, truth, rng, every=every, patience=patience)
    ranked = len(read)
    state = _sampling_phase(truth, read, rng, recall_target=recall_target,
                            confidence=confidence)
    stopped_at = len(read)
    found = int(truth[read].sum())
    rest = np.setdiff1d(np.arange(len(truth)), np.asarray(read, dtype=int))
    full_order = read + [int(i) for i in rest[np.argsort(-scores[rest], kind="stable")]]
    return {
        "seed": seed, "screened_at_stop": round(stopped_at / len(truth), 4),
        "recall_at_stop": round(found / max(1, int(truth.sum())), 4),
        "wss_at_95": round(wss_at(order=full_order, truth=truth), 4),
        "ranked_phase": ranked, "sampled": state["sampled"], "p_value": state["p_value"],
        "stopped": bool(state["can_stop"]), "reviewer_reads": stopped_at * reviewers,
    }, full_order


def simulate_run(**options: Any) -> dict[str, Any]:
    """One replay; the figures the command prints for its seed."""
    return simulate_trace(**options)[0]


def recall_curve(*, order: list[int], truth: np.ndarray, stopped_at: int,
                 max_points: int = 300) -> dict[str, Any]:
    """Records read -> relevant found along `order`, at most `max_points` points.

    The first (0, 0), the last (N, relevant) and the stop are always among the points, so the
    stop drawn on the curve lies exactly on it.
    """
    found = np.concatenate([[0], np.cumsum(np.asarray(truth, dtype=int)[np.asarray(order)])])
    total = len(order)
    xs = np.unique(np.concatenate([
        np.rint(np.linspace(0, total, min(total + 1, max_points - 1))).astype(int),
        [stopped_at]]))
    return {"points": [[int(x), int(found[x])] for x in xs],
            "stop": [int(stopped_at), int(found[stopped_at])]}


def simulate_traced(*, texts: list[str], truth: np.ndarray, seeds: int, **options: Any
                    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Every seed's run and the summary the issue asks for, with each seed's recall curve."""
    truth = np.asarray(truth, dtype=int)
    features = ranker.features_fit(texts=texts)
    runs, curves = [], []
    for seed in range(seeds):
        run, order = simulate_trace(features=features, truth=truth, seed=seed, **options)
        stopped_at = int(run["ranked_phase"]) + int(run["sampled"])
        runs.append(run)
        curves.append({"seed": seed, **recall_curve(order=order, truth=truth,
                                                    stopped_at=stopped_at)})
    return {
        "runs": runs,
        "mean_wss_at_95": round(float(np.mean([r["wss_at_95"] for r in runs])), 4),
        "mean_screened_at_stop": round(float(np.mean([r["screened_at_stop"] for r in runs])), 4),
        "min_recall_at_stop": min(r["recall_at_stop"] for r in runs),
    }, curves


def simulate(*, texts: list[str], truth: np.ndarray, seeds: int, **options: Any
             ) -> dict[str, Any]:
    """Every seed's run and the summary the issue asks for."""
    return simulate_traced(texts=texts, truth=truth, seeds=seeds, **options)[0]
