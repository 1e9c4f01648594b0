"""Switch to random sampling, read until the rule allows the stop, stop: the rest is marked no
and CSV, RIS, JSON Lines and the PRISMA counts carry the decisions and the justification."""

from __future__ import annotations

import csv
import io
import json

import pytest

from screening import export, selectors, services
from screening.visibility import SIGHT_ALL
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db


def _screen(team, session, count: int) -> None:  # noqa: F811
    for _ in range(count):
        record = selectors.record_next(user=team.reviewer, session=session)
        services.decision_record(user=team.reviewer, record=record, note="read",
                                 values={"oncological": "yes" if "cancer" in record.title.lower()
                                         else "no"})


def test_the_stop_is_refused_until_the_rule_is_met_then_recorded_in_every_export(team) -> None:  # noqa: F811
    # The hypergeometric rule, whose p-value at the stop is below alpha by construction (a
    # confseq stop rests on its running bound, and its p-value at that look may be higher);
    # the confseq stop and its justification: test_screening_session_with_the_confseq_rule_...
    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="x",
                                      labels=["oncological"], recall_target=0.5,
                                      confidence=0.5, stopping_rule="callaghan_spent")
    _screen(team, session, 6)
    session = services.sampling_start(user=team.maintainer, session=session)
    assert session.sampling_pool == 6
    with pytest.raises(services.ScreeningError, match="not met yet"):
        services.session_stop(user=team.maintainer, session=session)
    while not selectors.stopping_table(session=session)[0]["can_stop"]:
        _screen(team, session, 1)
    state = selectors.stopping_table(session=session)[0]
    assert state["sampled"] >= 1
    assert state["p_value"] < 0.5
    session = services.session_stop(user=team.maintainer, session=session)
    assert session.phase == "stopped"
    assert session.records.filter(done=False).count() == 0
    why = session.stop_justification
    assert why["labels"][0]["test"].startswith("Callaghan")
    assert why["stopped_by"] == "mona"

    rows = list(csv.DictReader(io.StringIO("".join(export.export_csv(session, sight=SIGHT_ALL)))))
    assert {r["reviewer"] for r in rows} >= {"rita"}
    stopped = [r for r in rows if r["final_source"] == "stopping rule"]
    if why["marked_no"]:
        assert stopped
        assert "p=" in stopped[0]["note"]
        assert stopped[0]["final"] == "no"
    lines = [json.loads(line) for line in export.export_jsonl(session, sight=SIGHT_ALL)]
    assert lines[0]["stop_justification"]["labels"][0]["pool"] == 6
    assert len(lines) == 1 + 12
    ris = "".join(export.export_ris(session, sight=SIGHT_ALL))
    assert ris.count("ER  - ") == 12
    assert "rita said" in ris
    prisma = export.prisma_counts(session)
    assert prisma["identified"] == 12
    assert prisma["screened"] + prisma["not_screened_marked_no"] == 12
    counts = prisma["per_label"]["oncological"]
    assert counts["included"] + counts["excluded"] == 12
