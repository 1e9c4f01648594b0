"""The session page's stopping panel (reads only): the rule, its assumptions, what it has cost
so far, and, in plain words, whether switching to random sampling pays off yet.

Advice here is an estimate and never the stop: the stop is the rule's test (screening.stopping).
"""

from __future__ import annotations

from typing import Any

from screening import stopping_cs, stopping_rules
from screening.models import Record, ScreeningSession

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
            "sampled_read": sampled_read, "read": ranked_read + sampled_read, "advice": advice}
