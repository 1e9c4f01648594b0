"""Replay a screening session on a fully labelled collection, for one label (pure, no Django).

The simulated reviewer answers with the collection's own labels, ranks with screening.ranker
and stops with a rule of screening.stopping_rules. One ranked review (continuous active
learning) per ranker and seed serves every rule, because no rule changes the ranked order:

1. cold start: records in random order until the label has one yes and one no;
2. ranked phase: the most likely record first (or, with ``explore``, now and then a random
   one), the ranker refitted every ``every`` decisions;
3. the rules:
   * ``callaghan``: after ``patience`` irrelevant records in a row the reviewer switches to
     random sampling from the records still unread until p < 1 - confidence (or the pool is
     read to its end). Any switch rule keeps the guarantee: the test looks at the sample only.
   * ``confseq``: the same random sampling, switched to where stopping_cs.switch_index says
     (the ranked phase's recent yield against what the target tolerates), not at ``patience``.
   * ``qbcb`` / ``target``: a target set is drawn at random and read before the ranked phase;
     the ranked order does not depend on it (a target record costs nothing when the order
     reaches it), and the review stops once the order has reached the rule's cutoff of target
     positives. The reads are the target set plus the ranked records outside it.

WSS@95 is (N - n95) / N - 0.05, n95 being the records read, in the session's order, when 95% of
the relevant ones had been found; records the session never read follow in the order of the
last ranking. ``wss_at_95_ranker`` is the same along the ranked order alone (no rule), the
figure ranker papers report.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from screening import ranker as rankers
from screening import stopping, stopping_cs, stopping_cs_beside, stopping_cs_zero, stopping_rules

QBCB_TARGET_FRACTION = 0.2  # of the collection; at 10% relevant, about 59 target positives
EXPLORE = {"svm-explore": 0.05}
# one switch and one random stream; two priors, and ranked reading beside the sample
CONFSEQ_RULES = {"confseq", "confseq_zero", "confseq_beside"}


def _features_kind(ranker: str) -> str:
    """The ranker whose features and model `ranker` uses (svm-explore: svm's, picked apart)."""
    return "svm" if ranker == "svm-explore" else ranker


def _next_ranked(scores: np.ndarray, unread: np.ndarray, count: int) -> list[int]:
    candidates = np.flatnonzero(unread)
    if len(candidates) <= count:
        return list(candidates[np.argsort(-scores[candidates], kind="stable")])
    top = np.argpartition(-scores[candidates], count)[:count]
    chosen = candidates[top]
    return list(chosen[np.argsort(-scores[chosen], kind="stable")])


def _batch(scores: np.ndarray, unread: np.ndarray, rng: np.random.Generator, *, every: int,
           learned: bool, explore: float) -> list[int]:
    if not learned:
        return [int(rng.choice(np.flatnonzero(unread)))]
    batch = [int(i) for i in _next_ranked(scores, unread, every)]
    if explore > 0:
        for slot in range(len(batch)):
            if rng.random() < explore:  # a random unread record in place of this one
                others = np.flatnonzero(unread)
                pick = int(rng.choice(others))
                if pick not in batch:
                    batch[slot] = pick
    return batch


def ranked_review(features: Any, truth: np.ndarray, rng: np.random.Generator, *, ranker: str,
                  every: int, patience: int, done: Callable[[list[int]], bool]
                  ) -> dict[str, Any]:
    """The ranked order, read until `done(order)`, and where a reviewer with `patience` would
    have switched, with the ranking then (scores) and the last one (last_scores)."""
    total = len(truth)
    unread = np.ones(total, dtype=bool)
    read: list[int] = []
    scores = rng.random(total)  # cold start: random order
    run, switch_at, switch_scores, refit_at = 0, None, None, 0
    explore = EXPLORE.get(ranker, 0.0)
    while unread.any() and not (switch_at is not None and done(read)):
        learned = rankers.can_learn(y=truth[read])
        for index in _batch(scores, unread, rng, every=every, learned=learned, explore=explore):
            read.append(index)
            unread[index] = False
            run = 0 if truth[index] else run + 1
            if switch_at is None and run >= patience:
                switch_at, switch_scores = len(read), scores
                break
        if switch_at is not None and len(read) < refit_at:
            continue
        # Past the patience switch only the target-set rules read on; refitting every 5% of
        # the records read keeps the replay cheap where the ranking changes least.
        refit_at = len(read) + (every if switch_at is None else max(every, len(read) // 20))
        if rankers.can_learn(y=truth[read]) and unread.any():
            scores = rankers.label_scores(features=features, decided=read, y=truth[read],
                                          ranker=_features_kind(ranker))
    if switch_at is None:
        switch_at, switch_scores = len(read), scores
    return {"order": read, "switch_at": switch_at, "switch_scores": switch_scores,
            "last_scores": scores}


def _completed(order: list[int], scores: np.ndarray, total: int) -> list[int]:
    """`order`, then every record not in it by `scores`, highest first."""
    seen = np.zeros(total, dtype=bool)
    seen[np.asarray(order, dtype=int)] = True
    rest = np.flatnonzero(~seen)
    return list(order) + [int(i) for i in rest[np.argsort(-scores[rest], kind="stable")]]


def wss_at(*, order: list[int], truth: np.ndarray, recall: float = 0.95) -> float:
    total, relevant = len(truth), int(truth.sum())
    needed = math.ceil(recall * relevant)
    found = np.cumsum(truth[np.asarray(order, dtype=int)])
    n_at = int(np.searchsorted(found, needed) + 1) if needed else 0
    return (total - n_at) / total - (1 - recall)


def _callaghan(review: dict[str, Any], truth: np.ndarray, rng: np.random.Generator, *,
               recall_target: float, confidence: float, spent: bool
               ) -> tuple[dict[str, Any], list[int]]:
    read = list(review["order"][:review["switch_at"]])
    ranked = len(read)
    rest = np.setdiff1d(np.arange(len(truth)), np.asarray(read, dtype=int))
    order = rng.permutation(rest)
    r_al = int(truth[read].sum())
    pool, k, n = len(order), 0, 0
    for n, index in enumerate(order, start=1):
        read.append(int(index))
        k += int(truth[index])
        # p alone each step (cheap); the full state, with its bisections, once at the stop
        alpha = (stopping.alpha_spent(alpha=1 - confidence, k=k) if spent
                 else 1 - confidence)
        if stopping.p_value(pool=pool, sampled=n, k=k, r_al=r_al,
                            recall_target=recall_target) < alpha:
            break
    state = stopping.stop_state(label="", pool=pool, sampled=n, k=k, r_al=r_al,
                                recall_target=recall_target, confidence=confidence,
                                spent=spent)
    return ({"ranked_phase": ranked, "sampled": n, "p_value": state.p_value,
             "stopped": bool(state.can_stop)},
            _completed(read, review["switch_scores"], len(truth)))


def _confseq_switch(order: list[int], truth: np.ndarray, *, recall_target: float
                    ) -> int | None:
    return stopping_cs.switch_index(ranked=[int(t) for t in truth[np.asarray(order, dtype=int)]],
                                    total=len(truth), recall_target=recall_target)


def _confseq(review: dict[str, Any], truth: np.ndarray, rng: np.random.Generator, *,
             recall_target: float, confidence: float, rule: str = "confseq"
             ) -> tuple[dict[str, Any], list[int]]:
    """The confidence-sequence rule (screening.stopping_cs) with the same random stream as
    `_callaghan`, its own switch (stopping_cs.switch_index) and its prior from the ranked
    phase's recent yield; ``confseq_zero`` adds the prior's mass on none left
    (screening.stopping_cs_zero)."""
    switch = _confseq_switch(review["order"], truth, recall_target=recall_target)
    read = list(review["order"][:switch if switch is not None else len(review["order"])])
    ranked = len(read)
    rest = np.setdiff1d(np.arange(len(truth)), np.asarray(read, dtype=int))
    order = rng.permutation(rest)
    prior_a, prior_b = stopping_cs.prior_from_ranked(recent=[int(t) for t in truth[read]])
    kind = stopping_cs_zero.ZeroPoolBound if rule == "confseq_zero" else stopping_cs.PoolBound
    bound = kind(pool=len(order), r_al=int(truth[read].sum()), alpha=1 - confidence,
                 prior_a=prior_a, prior_b=prior_b)
    for index in order:
        if bound.can_stop(recall_target=recall_target):
            break
        read.append(int(index))
        bound.observe(relevant=bool(truth[index]))
    return ({"ranked_phase": ranked, "sampled": bound.sampled, "left_upper": bound.left_upper,
             "claimable_recall": round(bound.claimable_recall(), 4),
             "stopped": bound.can_stop(recall_target=recall_target)},
            _completed(read, review["switch_scores"], len(truth)))


def _confseq_beside(review: dict[str, Any], truth: np.ndarray, rng: np.random.Generator, *,
                    recall_target: float, confidence: float) -> tuple[dict[str, Any], list[int]]:
    """``confseq_beside``: `_confseq`'s switch, prior and random stream, and beside each draw
    one record in ranked order (the ranked review's own order on, then its last ranking)
    until stopping_cs_beside.BESIDE_RUN irrelevant ones in a row."""
    total = len(truth)
    switch = _confseq_switch(review["order"], truth, recall_target=recall_target)
    read = list(review["order"][:switch if switch is not None else len(review["order"])])
    ranked = len(read)
    sample = rng.permutation(np.setdiff1d(np.arange(total), np.asarray(read, dtype=int)))
    prior_a, prior_b = stopping_cs.prior_from_ranked(recent=[int(t) for t in truth[read]])
    beside = stopping_cs_beside.BesideBound(bound=stopping_cs.PoolBound(
        pool=len(sample), r_al=int(truth[read].sum()), alpha=1 - confidence, prior_a=prior_a,
        prior_b=prior_b))
    queue = iter(_completed(review["order"], review["last_scores"], total)[ranked:])
    run, beside_reads = 0, 0
    for index in sample:
        if beside.can_stop(recall_target=recall_target):
            break
        while run < stopping_cs_beside.BESIDE_RUN:
            pick = next(queue, None)
            if pick is None:
                run = stopping_cs_beside.BESIDE_RUN
            elif beside.ranked_read(record=int(pick), relevant=bool(truth[pick])):
                read.append(int(pick))
                beside_reads += 1
                run = 0 if truth[pick] else run + 1
                break
        if beside.draw(record=int(index), relevant=bool(truth[index])):
            read.append(int(index))
    return ({"ranked_phase": ranked, "sampled": len(read) - ranked, "beside": beside_reads,
             "drawn": beside.bound.sampled, "left_upper": beside.left_upper,
             "claimable_recall": round(beside.claimable_recall(), 4),
             "stopped": beside.can_stop(recall_target=recall_target)},
            _completed(read, review["switch_scores"], total))


def target_set_draw(truth: np.ndarray, rng: np.random.Generator, *, rule: str,
                    recall_target: float, confidence: float) -> np.ndarray:
    """The rule's target set: a fixed share of the collection (qbcb), or records drawn until
    K are relevant (target), in a random order independent of the ranked review's."""
    order = rng.permutation(len(truth))
    if rule == "qbcb":
        return order[:max(1, math.ceil(QBCB_TARGET_FRACTION * len(truth)))]
    needed = stopping_rules.target_positives_needed(recall_target=recall_target,
                                                    confidence=confidence)
    found = np.cumsum(truth[order])
    end = int(np.searchsorted(found, needed) + 1) if found[-1] >= needed else len(order)
    return order[:end]


def target_cutoff(truth: np.ndarray, target: np.ndarray, *, rule: str, recall_target: float,
                  confidence: float) -> int | None:
    positives = int(truth[target].sum())
    return stopping_rules.target_state(
        rule=rule, target_size=len(target), positives=positives, reached=0,
        recall_target=recall_target, confidence=confidence).cutoff


def _target_rule(review: dict[str, Any], truth: np.ndarray, target: np.ndarray, *, rule: str,
                 recall_target: float, confidence: float) -> tuple[dict[str, Any], list[int]]:
    total = len(truth)
    cutoff = target_cutoff(truth, target, rule=rule, recall_target=recall_target,
                           confidence=confidence)
    in_target = np.zeros(total, dtype=bool)
    in_target[target] = True
    ranked = _completed(review["order"], review["last_scores"], total)
    reached = np.cumsum(in_target[ranked] & (truth[ranked] == 1))
    # no cutoff (too few target positives): nothing certifies, the collection is read
    stop = total if cutoff is None else int(np.searchsorted(reached, cutoff) + 1)
    session = list(target) + [i for i in ranked if not in_target[i]]
    read = set(int(i) for i in target) | set(ranked[:stop])
    return ({"ranked_phase": len(read) - len(target), "target_set": len(target),
             "target_positives": int(truth[target].sum()), "cutoff": cutoff,
             "stopped": cutoff is not None},
            session[:len(read)] + [i for i in session if i not in read])


def simulate_seed(*, features: Any, truth: np.ndarray, seed: int, rules: list[str],
                  ranker: str = rankers.DEFAULT_RANKER, recall_target: float = 0.95,
                  confidence: float = 0.95, every: int = 10, patience: int = 50,
                  reviewers: int = 1) -> dict[str, tuple[dict[str, Any], list[int]]]:
    """One seed's ranked review shared by every rule: per rule, its figures and its order."""
    truth = np.asarray(truth, dtype=int)
    total, relevant = len(truth), max(1, int(truth.sum()))
    targets = {rule: target_set_draw(truth, np.random.default_rng([seed, 2, i]), rule=rule,
                                     recall_target=recall_target, confidence=confidence)
               for i, rule in enumerate(rules) if stopping_rules.RULES[rule].needs_target_set}
    needs = [(t, target_cutoff(truth, t, rule=r, recall_target=recall_target,
                               confidence=confidence)) for r, t in targets.items()]
    wanted = math.ceil(0.95 * int(truth.sum()))

    def done(order: list[int]) -> bool:
        if int(truth[order].sum()) < wanted:
            return False  # the ranker's own WSS@95 needs the order to 95% recall
        if CONFSEQ_RULES & set(rules) and _confseq_switch(order, truth,
                                                  recall_target=recall_target) is None:
            return False  # its switch is read off the ranked order, which must reach it
        reached = set(order)
        return all(c is None or sum(1 for i in t if truth[i] and i in reached) >= c
                   for t, c in needs)

    review = ranked_review(features, truth, np.random.default_rng(seed), ranker=ranker,
                           every=every, patience=patience, done=done)
    ranker_wss = wss_at(order=_completed(review["order"], review["last_scores"], total),
                        truth=truth)
    results = {}
    for rule in rules:
        if rule == "confseq_beside":
            figures, order = _confseq_beside(review, truth, np.random.default_rng([seed, 1]),
                                             recall_target=recall_target,
                                             confidence=confidence)
        elif rule in CONFSEQ_RULES:
            figures, order = _confseq(review, truth, np.random.default_rng([seed, 1]),
                                      recall_target=recall_target, confidence=confidence,
                                      rule=rule)
        elif not stopping_rules.RULES[rule].needs_target_set:
            figures, order = _callaghan(review, truth, np.random.default_rng([seed, 1]),
                                        recall_target=recall_target, confidence=confidence,
                                        spent=rule == "callaghan_spent")
        else:
            figures, order = _target_rule(review, truth, targets[rule], rule=rule,
                                          recall_target=recall_target, confidence=confidence)
        stopped_at = figures["ranked_phase"] + figures.get("sampled", 0) + figures.get(
            "target_set", 0)
        found = int(truth[order[:stopped_at]].sum())
        results[rule] = ({
            "seed": seed, "screened_at_stop": round(stopped_at / total, 4),
            "recall_at_stop": round(found / relevant, 4),
            "wss_at_95": round(wss_at(order=order, truth=truth), 4),
            "wss_at_95_ranker": round(ranker_wss, 4), **figures,
            "reviewer_reads": stopped_at * reviewers}, order)
    return results


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


def summary_of(runs: list[dict[str, Any]], *, recall_target: float) -> dict[str, Any]:
    """The figures the issue asks for, over one combination's runs."""
    return {
        "runs": runs,
        "mean_wss_at_95": round(float(np.mean([r["wss_at_95"] for r in runs])), 4),
        "mean_screened_at_stop": round(float(np.mean([r["screened_at_stop"] for r in runs])), 4),
        "min_recall_at_stop": min(r["recall_at_stop"] for r in runs),
        "reached_target": sum(1 for r in runs if r["recall_at_stop"] >= recall_target),
        "mean_wss_at_95_ranker": round(float(np.mean([r["wss_at_95_ranker"] for r in runs])),
                                       4),
    }


def simulate_combinations(*, texts: list[str], truth: np.ndarray, seeds: int,
                          rules: list[str], rankers_: list[str], recall_target: float = 0.95,
                          embed: rankers.Embedder | None = None,
                          **options: Any) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Per (ranker, rule): the summary, with rule and ranker named, and each seed's curve.

    Features are computed once per kind of features (`embed` gives the sentence vectors a
    ranker such as ``svm-embed`` needs); each seed's ranked review is shared by every rule.
    """
    truth = np.asarray(truth, dtype=int)
    features_by_kind: dict[str, Any] = {}
    out = []
    for ranker in rankers_:
        kind = _features_kind(ranker)
        if kind not in features_by_kind:
            features_by_kind[kind] = rankers.features_fit(texts=texts, ranker=kind,
                                                          embed=embed)
        per_rule: dict[str, tuple[list, list]] = {rule: ([], []) for rule in rules}
        for seed in range(seeds):
            seeded = simulate_seed(features=features_by_kind[kind], truth=truth, seed=seed,
                                   rules=rules, ranker=ranker, recall_target=recall_target,
                                   **options)
            for rule, (run, order) in seeded.items():
                stopped_at = round(run["screened_at_stop"] * len(truth))
                per_rule[rule][0].append(run)
                per_rule[rule][1].append({"seed": seed, **recall_curve(
                    order=order, truth=truth, stopped_at=stopped_at)})
        for rule in rules:
            runs, curves = per_rule[rule]
            out.append(({"rule": rule, "ranker": ranker,
                         **summary_of(runs, recall_target=recall_target)}, curves))
    return out


def simulate_traced(*, texts: list[str], truth: np.ndarray, seeds: int,
                    rule: str = stopping_rules.DEFAULT_RULE,
                    ranker: str = rankers.DEFAULT_RANKER, **options: Any
                    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Every seed's run and the summary the issue asks for, with each seed's recall curve."""
    return simulate_combinations(texts=texts, truth=truth, seeds=seeds, rules=[rule],
                                 rankers_=[ranker], **options)[0]


def simulate(*, texts: list[str], truth: np.ndarray, seeds: int, **options: Any
             ) -> dict[str, Any]:
    """Every seed's run and the summary the issue asks for."""
    return simulate_traced(texts=texts, truth=truth, seeds=seeds, **options)[0]
