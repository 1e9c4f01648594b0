"""Two reviewers screen the same records blind; their disagreement becomes a conflict that a
maintainer resolves; agreement (percent and kappa) is computed over the doubly read records."""

from __future__ import annotations

from typing import Any

import pytest

from screening import selectors, services
from screening.models import Decision
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db


def _session(team: Any) -> Any:  # noqa: F811
    return services.session_create(user=team.maintainer, dataset=team.dataset, name="Onc",
                                   labels=["oncological"], reviewers_per_record=2)


def test_the_second_reviewer_gets_the_record_without_the_first_ones_decision(team) -> None:  # noqa: F811
    session = _session(team)
    first = selectors.record_next(user=team.reviewer, session=session)
    services.decision_record(user=team.reviewer, record=first, values={"oncological": "yes"},
                             note="rita-private-note")
    seen = selectors.record_next(user=team.reviewer2, session=session)
    assert seen == first  # the ranking's first record still needs its second reviewer
    payload = selectors.record_payload(record=seen, user=team.reviewer2)
    assert payload["mine"] == {}
    assert payload["note"] == ""
    # A word no record's text holds: the payload must carry nothing of the first decision.
    assert "rita-private-note" not in str(payload)
    # the first reviewer moves on to another record
    assert selectors.record_next(user=team.reviewer, session=session) != first


def test_a_disagreement_is_a_conflict_until_a_maintainer_resolves_it(team) -> None:  # noqa: F811
    session = _session(team)
    record = selectors.record_next(user=team.reviewer, session=session)
    services.decision_record(user=team.reviewer, record=record, values={"oncological": "yes"})
    services.decision_record(user=team.reviewer2, record=record, values={"oncological": "no"})
    record.refresh_from_db()
    assert not record.done
    assert record.final == {}
    conflicts = selectors.conflicts_list(session=session)
    assert [(c["record"].pk, c["label"]) for c in conflicts] == [(record.pk, "oncological")]
    # a third reviewer cannot add to a record that has its two
    with pytest.raises(services.ScreeningError, match="already has its reviewers"):
        services.decision_record(user=team.owner, record=record, values={"oncological": "no"})
    services.conflict_resolve(user=team.maintainer, record=record, label="oncological",
                              value="yes", note="metastasis counts")
    record.refresh_from_db()
    assert record.done
    assert record.final == {"oncological": "yes"}
    assert selectors.conflicts_list(session=session) == []
    assert Decision.objects.filter(record=record).count() == 2  # both kept, attributed


def test_agreement_is_shown_per_label_once_records_are_read_twice(team) -> None:  # noqa: F811
    session = _session(team)
    for answer_a, answer_b in [("yes", "yes"), ("no", "no"), ("yes", "no"), ("no", "no")]:
        record = selectors.record_next(user=team.reviewer, session=session)
        services.decision_record(user=team.reviewer, record=record,
                                 values={"oncological": answer_a})
        services.decision_record(user=team.reviewer2, record=record,
                                 values={"oncological": answer_b})
    [row] = selectors.agreement_table(session=session)
    assert row["n"] == 4
    assert row["percent_agreement"] == 75.0
    assert row["kappa"] == pytest.approx(0.5)
    summary = selectors.session_summary(session=session)
    assert summary["conflicts"] == 1
    assert summary["done"] == 3
    assert summary["remaining"] == 9
