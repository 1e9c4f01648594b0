"""Stopping, guided (issue 35 item 8; issue 36): only maintainers and owners switch a session to
random sampling, the page asks first and the switch is logged; the stopping panel names the
session's rule, its assumptions and its cost so far, and says when switching pays off."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from projects.models import Activity
from projects.policy import RoleRequired
from screening import selectors, services, stopping_rules
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db


def _page(person) -> str:
    client = Client()
    client.force_login(person)
    return client


def test_a_reviewer_cannot_switch_a_maintainer_can_and_it_is_logged(team) -> None:  # noqa: F811
    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="x",
                                      labels=["oncological"])
    with pytest.raises(RoleRequired):
        services.sampling_start(user=team.reviewer, session=session)
    refused = _page(team.reviewer).post(reverse("screening:action",
                                                args=[session.pk, "sampling"]))
    assert refused.status_code == 403
    session.refresh_from_db()
    assert session.phase == "ranked"

    session = services.sampling_start(user=team.maintainer, session=session)
    assert session.phase == "sampling"
    logged = Activity.objects.get(verb="screening_sampling", subject_id=str(session.pk))
    assert logged.actor == team.maintainer


def test_the_page_offers_the_switch_to_maintainers_only_behind_a_question(team) -> None:  # noqa: F811
    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="x",
                                      labels=["oncological"])
    url = reverse("screening:detail", args=[session.pk])
    maintainer_page = _page(team.maintainer).get(url).content.decode()
    assert 'id="start-sampling"' in maintainer_page
    assert 'data-confirm="Switch the whole session to random sampling?' in maintainer_page
    reviewer_page = _page(team.reviewer).get(url).content.decode()
    assert 'id="start-sampling"' not in reviewer_page
    rule = stopping_rules.RULES[stopping_rules.DEFAULT_RULE]
    assert session.stopping_rule == rule.name
    assert rule.title in reviewer_page
    assert rule.assumptions[0] in reviewer_page


def test_the_panel_counts_the_reads_and_says_when_switching_pays_off(team) -> None:  # noqa: F811
    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="x",
                                      labels=["oncological"])
    for _ in range(3):
        record = selectors.record_next(user=team.reviewer, session=session)
        services.decision_record(user=team.reviewer, record=record,
                                 values={"oncological": "no"})
    panel = selectors.session_summary(session=session)["stopping_panel"]
    assert (panel["read"], panel["ranked_read"], panel["sampled_read"]) == (3, 3, 0)
    assert panel["advice"] == [  # the default rule, confseq, judges the switch on its own window
        "oncological: 3 record(s) read in ranked order so far; this rule judges the switch on "
        "the last 200, so keep reading in ranked order."]
    session = services.sampling_start(user=team.maintainer, session=session)
    record = selectors.record_next(user=team.reviewer, session=session)
    services.decision_record(user=team.reviewer, record=record, values={"oncological": "no"})
    panel = selectors.session_summary(session=session)["stopping_panel"]
    assert (panel["read"], panel["sampled_read"]) == (4, 1)
    assert panel["advice"][0].startswith("oncological: 1 random records read, 0 relevant;")


def test_after_fifty_irrelevant_in_ranked_order_the_panel_says_switching_pays_off() -> None:
    from screening.stopping_panel import _advice

    state = {"more_needed": 312}
    assert _advice("x", 0, 50, state) == (
        "x: the ranked phase found no relevant record in its last 50, so switching to random "
        "sampling pays off now. The test will need about 312 random records, if none of them "
        "is relevant (each relevant one found adds more).")
    assert "found 4 relevant record(s) in its last 50: keep reading" in _advice(
        "x", 4, 50, state)


def test_a_confseq_session_is_advised_on_the_switch_its_own_simulation_measured() -> None:
    from screening import stopping_cs
    from screening.stopping_panel import _confseq_advice

    window = stopping_cs.SWITCH_WINDOW
    # 1,000 unread after 300 relevant found: 30 misses allowed at 0.95, so a yield of 3 in the
    # last 200 (4/202 of 1,000 ≈ 20 left) is due, 20 in 200 (about 104 left) is not.
    due = stopping_cs.switch_due(recent=[1] * 3 + [0] * (window - 3), found=300, unread=1000,
                                 recall_target=0.95)
    not_due = stopping_cs.switch_due(recent=[1] * 20 + [0] * (window - 20), found=300,
                                     unread=1000, recall_target=0.95)
    assert (due, not_due) == (True, False)
    assert "pays off now" in _confseq_advice("x", window, {"switch_due": due})
    assert "keep reading in ranked order" in _confseq_advice("x", window, {"switch_due": not_due})
    assert _confseq_advice("x", 120, {"switch_due": False}).startswith(
        f"x: 120 record(s) read in ranked order so far; this rule judges the switch on the last "
        f"{window}")
