"""The stopping panel a reviewer understands (issue 51): "about N more records before the stop,
if the yield stays as it is" with its range, the estimated recall now with its interval, what
the team would read under 0.95/0.95, 0.95/0.90 and 0.90/0.95 (the same rule, from the same
state), heuristic stops marked "no guarantee", and the statistics behind a toggle with a
sentence for the methods section. A blind reviewer still sees no panel."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from screening import selectors, services, stopping, stopping_cs_state, stopping_rules
from screening.stopping_forecast import Standing, knee, records_to_stop, wilson
from screening.stopping_panel import label_figures
from tests.priors_support import titled_session_make
from tests.screening_review_support import (
    cited_dataset_make,
    client_of,
    dual_session_make,
)
from tests.screening_support import team  # noqa: F401

DRAWS = [False] * 150 + [True] + [False] * 49
RECENT = [0] * 40 + [1] * 2 + [0] * 58


def _figures(rule: str) -> dict[str, Any]:
    standing = Standing(pool=2000, draws=DRAWS, r_al=60, ranked_recent=RECENT)
    if rule == "confseq":
        state = stopping_cs_state.confseq_state(
            label="onc", pool=2000, draws=DRAWS, r_al=60, ranked_recent=RECENT,
            recall_target=0.95, confidence=0.95)
    else:
        state = stopping.stop_state(label="onc", pool=2000, sampled=200, k=1, r_al=60,
                                    recall_target=0.95, confidence=0.95).as_dict()
    return label_figures(rule=stopping_rules.RULES[rule], state=state, standing=standing,
                         ranked=[1] * 60 + [0] * 300, read=560, sampling=True)


@pytest.mark.parametrize("rule", ["confseq", "callaghan"])
def test_the_panel_speaks_of_records_recall_and_other_targets(rule: str) -> None:
    figures = _figures(rule)
    ahead = figures["ahead"]
    assert ahead["low"] <= ahead["point"] <= ahead["high"]
    assert figures["ahead_said"] == (
        f"onc: About {ahead['point']} more records before the stop, if the yield stays as it "
        f"is (range {ahead['low']}–{ahead['high']}).")
    # 61 found; 1 relevant in 200 random records, so about 9 left among the 1800 unread.
    point, low, high = figures["recall"]
    assert point == pytest.approx(61 / (61 + 1800 / 200))
    assert low < point < high
    assert figures["recall_said"] == f"Estimated recall now: {point:.2f} ({low:.2f}–{high:.2f})."
    table = {(row["recall_target"], row["confidence"]): row for row in figures["table"]}
    assert list(table) == [(0.95, 0.95), (0.95, 0.90), (0.90, 0.95)]
    # The same rule from the same state: the session's own target is the first row.
    assert table[(0.95, 0.95)]["more"] == ahead["point"]
    assert table[(0.95, 0.95)]["total"] == 560 + ahead["point"]
    assert table[(0.90, 0.95)]["more"] <= table[(0.95, 0.95)]["more"]
    assert table[(0.95, 0.90)]["more"] <= table[(0.95, 0.95)]["more"]
    heuristics = {h["name"]: h for h in figures["heuristics"]}
    assert heuristics["50 irrelevant in a row"]["met"]
    assert heuristics["50 irrelevant in a row"]["said"].endswith("No guarantee.")
    assert heuristics["knee"]["met"]
    assert "Cormack & Grossman" in heuristics["knee"]["said"]
    assert figures["statistics"] | {"test": ""} == {
        "test": "", "N": 2000, "n": 200, "k": 1, "r_al": 60,
        "p": figures["statistics"]["p"]}
    assert figures["methods"].startswith("Screening was stopped using the random sample")
    assert "recall of at least 0.95 with 95% confidence" in figures["methods"]
    assert "n = 200 of them with k = 1 relevant" in figures["methods"]


def test_the_forecast_is_the_rules_own_stop_and_the_heuristics_are_computed_by_hand() -> None:
    # Nothing relevant ahead: the forecast is the rule's own "more needed if none relevant".
    state = stopping.stop_state(label="x", pool=500, sampled=20, k=0, r_al=30,
                                recall_target=0.95, confidence=0.95)
    more = records_to_stop(rule="callaghan", standing=Standing(pool=500, draws=[False] * 20,
                                                               r_al=30),
                           recall_target=0.95, confidence=0.95, rate=0.0)
    assert more is not None
    assert state.more_needed <= more <= state.more_needed + max(1, more // 32)
    assert wilson(k=0, n=0) == (0.0, 0.0, 1.0)
    # Ten relevant in the first 10 of 200, none after: the knee at 10, ratio 10/1 / (1/190).
    found = knee(ranked=[1] * 10 + [0] * 190)
    assert found == {"knee_at": 10, "ratio": 190.0, "met": True}
    assert knee(ranked=[1] * 10 + [0] * 90)["met"] is False  # fewer than 150 read


@pytest.mark.django_db
def test_the_page_shows_the_words_with_the_statistics_one_click_away(team) -> None:  # noqa: F811
    session = titled_session_make(team)
    for _ in range(3):
        record = selectors.record_next(user=team.reviewer, session=session)
        services.decision_record(user=team.reviewer, record=record,
                                 values={"oncological": "yes" if _ == 0 else "no"})
    panel = selectors.session_summary(session=session)["stopping_panel"]
    figures = panel["labels"][0]
    assert figures["ahead_said"].startswith(
        "oncological: If the team switched to random sampling now: about ")
    text = client_of(team.maintainer).get(reverse("screening:detail", args=[session.pk])
                                          ).content.decode()
    assert 'class="stopping-ahead"' in text
    assert "no guarantee" in text
    assert '<details id="stopping-statistics">' in text
    assert "To paste into the paper" in text


@pytest.mark.django_db
def test_a_blind_reviewer_still_sees_no_panel(team) -> None:  # noqa: F811
    session = dual_session_make(team, cited_dataset_make(team))
    answer = client_of(team.reviewer).get(reverse("screening:summary_json", args=[session.pk]))
    assert answer.json()["stopping_panel"] is None
    page = client_of(team.reviewer).get(reverse("screening:detail", args=[session.pk]))
    assert 'id="stopping-hidden"' in page.content.decode()
    assert "stopping-ahead" not in page.content.decode()
