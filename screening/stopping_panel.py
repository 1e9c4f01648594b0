"""The session page's stopping panel (reads only): the rule, its assumptions, what it has cost
so far, and, in plain words, whether switching to random sampling pays off yet.

Advice here is an estimate and never the stop: the stop is the rule's test (screening.stopping).
"""

from __future__ import annotations

from typing import Any

from screening import stopping_cs, stopping_forecast, stopping_rules
from screening.models import Record, ScreeningSession
from screening.stopping_forecast import FORECAST_MAX, Standing

# The simulation's switch (simulate_screening --patience): a run of this many irrelevant
# records in ranked order is when the reviewer it models switches.
LAST = 50


def _advice(label: str, found: int, seen: int, state: dict[str, Any]) -> str:
    needed = state["more_needed"]
    if seen < LAST:
        return (f"{label}: {seen} record(s) read in ranked order so far; the ranked phase finds "
                "relevant records fastest at first, so keep reading in ranked order.")
    if found == 0:
        return (f"{label}: the ranked phase found no relevant record in its last {LAST}, so "
                f"switching to random sampling pays off now. The test will need about {needed} "
                "random records, if none of them is relevant (each relevant one found adds "
                "more).")
    return (f"{label}: the ranked phase found {found} relevant record(s) in its last {LAST}: "
            "keep reading in ranked order. Switching now, the test would need at least "
            f"{needed} random records, and every relevant record left for the sample to find "
            "would add more.")


def _confseq_advice(label: str, seen: int, state: dict[str, Any]) -> str:
    """confseq's own switch (stopping_cs.switch_due), the one its simulation measured: a
    yield over the last SWITCH_WINDOW ranked records low enough that the records left unread
    hold at most a couple of times the misses the target allows."""
    window = stopping_cs.SWITCH_WINDOW
    if seen < window:
        return (f"{label}: {seen} record(s) read in ranked order so far; this rule judges the "
                f"switch on the last {window}, so keep reading in ranked order.")
    if state.get("switch_due"):
        return (f"{label}: the last {window} ranked records found so few relevant ones that "
                "the records left likely hold few more than the target allows: switching to "
                "random sampling pays off now.")
    return (f"{label}: the last {window} ranked records still find relevant ones often enough "
            "that the records left may hold more than the target allows: keep reading in "
            "ranked order.")


def _bound(state: dict[str, Any]) -> str:
    """The confidence sequence's bound, for `confseq` (its states carry `left_upper`)."""
    if "left_upper" not in state:
        return ""
    return (f" At most {state['left_upper']} relevant record(s) are left unread (confidence "
            f"{state['confidence']}), so recall is at least {state['claimable_recall']:.3f}.")


def stopping_panel(*, session: ScreeningSession, states: list[dict[str, Any]]
                   ) -> dict[str, Any]:
    """The rule and its cost so far, and per label the advice (`states`: the stopping table)."""
    rule = stopping_rules.RULES.get(session.stopping_rule,
                                    stopping_rules.RULES[stopping_rules.DEFAULT_RULE])
    phases = list(Record.objects.filter(session=session, done=True).values_list(
        "done_phase", flat=True))
    ranked_read, sampled_read = phases.count("ranked"), phases.count("sample")
    advice = []
    if session.phase == ScreeningSession.Phase.RANKED:
        window = max(LAST, stopping_cs.SWITCH_WINDOW)
        recent = list(Record.objects.filter(session=session, done_phase="ranked").order_by(
            "-done_at", "-pk").values_list("final", flat=True)[:window])
        for state in states:
            if "switch_due" in state:
                advice.append(_confseq_advice(state["label"], len(recent), state))
                continue
            found = sum(1 for final in recent[:LAST] if final.get(state["label"]) == "yes")
            advice.append(_advice(state["label"], found, min(len(recent), LAST), state))
    elif session.phase == ScreeningSession.Phase.SAMPLING:
        advice = [f"{s['label']}: {s['sampled']} random records read, {s['k']} relevant; "
                  f"{s['more_needed']} more needed if none of them is relevant."
                  + _bound(s) for s in states]
    return {"rule": rule.name, "title": rule.title, "citation": rule.citation,
            "assumptions": list(rule.assumptions), "ranked_read": ranked_read,
            "sampled_read": sampled_read, "read": ranked_read + sampled_read, "advice": advice,
            "labels": _labels_figures(session=session, states=states, rule=rule,
                                      read=ranked_read + sampled_read)}


def _labels_figures(*, session: ScreeningSession, states: list[dict[str, Any]],
                    rule: stopping_rules.Rule, read: int) -> list[dict[str, Any]]:
    """Per label, the plain-words figures (label_figures), from the session's rows."""
    if session.phase == ScreeningSession.Phase.STOPPED:
        return []
    rows = list(Record.objects.filter(session=session).values_list(
        "final", "sample_order", "done_phase").order_by("sample_order"))
    ranked_finals = list(Record.objects.filter(
        session=session, done=True, sample_order__isnull=True, done_phase="ranked")
        .order_by("done_at", "pk").values_list("final", flat=True))
    out = []
    for state in states:
        label = state["label"]
        ranked = [int(final.get(label) == "yes") for final in ranked_finals]
        draws = (stopping_forecast.sample_draws(rows=rows, label=label)
                 if session.sampling_started_at is not None else [])
        standing = Standing(pool=state["pool"], draws=draws, r_al=state["r_al"],
                            ranked_recent=ranked[-stopping_cs.RECENT:])
        out.append(label_figures(rule=rule, state=state, standing=standing, ranked=ranked,
                                 read=read, sampling=session.sampling_started_at is not None))
    return out


def _order(more: int | None) -> int:
    return FORECAST_MAX + 1 if more is None else more


def _about(more: int | None, unread: int) -> str:
    if more is not None:
        return str(more)
    return f"all {unread}" if unread <= FORECAST_MAX else f"over {FORECAST_MAX}"


def label_figures(*, rule: stopping_rules.Rule, state: dict[str, Any], standing: Standing,
                  ranked: list[int], read: int, sampling: bool) -> dict[str, Any]:
    """One label's panel in words: records before the stop if the yield stays as it is (with
    its range), recall now (with its interval), other targets, heuristic stops, and the
    statistics with a sentence for the methods section. `state`: the rule's stopping state."""
    label, unread = state["label"], standing.pool - len(standing.draws)
    window = ranked[-LAST:]
    k, n = (sum(standing.draws), len(standing.draws)) if sampling else (sum(window), len(window))
    rate = stopping_forecast.wilson(k=k, n=n)

    def ahead(target: float, confidence: float, share: float) -> int | None:
        return stopping_forecast.records_to_stop(
            rule=rule.name, standing=standing, recall_target=target, confidence=confidence,
            rate=share)

    target, confidence = state["recall_target"], state["confidence"]
    point, *spread = (ahead(target, confidence, share) for share in rate)
    # More relevant records ahead may move a rule's stop either way (more found, more left).
    every = [*spread, point]
    low, high = min(every, key=_order), max(every, key=_order)
    where = "" if sampling else "If the team switched to random sampling now: a"
    ahead_said = (f"{label}: the stop is met now." if state["can_stop"] else
                  f"{label}: {where or 'A'}bout {_about(point, unread)} more records before the "
                  f"stop, if the yield stays as it is (range {_about(low, unread)}–"
                  f"{_about(high, unread)}).")
    recall = stopping_forecast.recall_now(found=state["r_al"] + state["k"], unread=unread,
                                          rate=rate)
    recall_said = (f"Estimated recall now: {recall[0]:.2f} ({recall[1]:.2f}–{recall[2]:.2f})"
                   + ("" if sampling else f", if the unread records are as rich in relevant "
                      f"ones as the last {n} read in ranked order") + "."
                   if recall else "Estimated recall now: none yet (nothing relevant found).")
    table = [{"recall_target": t, "confidence": c,
              "more": (more := ahead(t, c, rate[0])), "more_said": _about(more, unread),
              "total": None if more is None else read + more} for t, c in
             stopping_forecast.OTHER_TARGETS]
    return {"label": label, "ahead": {"point": point, "low": low, "high": high},
            "ahead_said": ahead_said,
            "recall": list(recall) if recall else None, "recall_said": recall_said,
            "table": table, "heuristics": _heuristics(ranked=ranked),
            "statistics": {"test": state.get("test", ""), "N": state["pool"],
                           "n": state["sampled"], "k": state["k"], "r_al": state["r_al"],
                           "p": state["p_value"]},
            "methods": methods_sentence(rule=rule, state=state)}


def _heuristics(*, ranked: list[int]) -> list[dict[str, Any]]:
    run = stopping_forecast.run_of_irrelevant(ranked=ranked)
    limit = stopping_forecast.RUN_IRRELEVANT
    out = [{"name": f"{limit} irrelevant in a row", "met": run >= limit,
            "said": f"{run} irrelevant record(s) in a row in ranked order; this heuristic "
                    f"stops at {limit}: {'met' if run >= limit else 'not met'}. No guarantee."}]
    knee = stopping_forecast.knee(ranked=ranked)
    said = ("The knee method (Cormack & Grossman 2016): nothing relevant found yet."
            if knee is None else
            f"The knee method (Cormack & Grossman 2016): knee at record {knee['knee_at']}, "
            f"slope ratio {knee['ratio']} (stops at {stopping_forecast.KNEE_RATIO:g} once "
            f"{stopping_forecast.KNEE_MIN_READ} are read): "
            f"{'met' if knee['met'] else 'not met'}. No guarantee.")
    out.append({"name": "knee", "met": bool(knee and knee["met"]), "said": said})
    return out


def methods_sentence(*, rule: stopping_rules.Rule, state: dict[str, Any]) -> str:
    """A sentence for the paper's methods, with the figures as they stand."""
    title = rule.title[:1].lower() + rule.title[1:]
    return (f"Screening was stopped using the {title} ({rule.citation}) when the test showed, "
            f"for {state['label']}, a recall of at least {state['recall_target']:g} with "
            f"{state['confidence']:.0%} confidence: N = {state['pool']} records unread at the "
            f"switch to random sampling, a random sample of n = {state['sampled']} of them "
            f"with k = {state['k']} relevant, {state['r_al']} relevant record(s) found before "
            f"it, p = {state['p_value']:.3g}.")
