"""Set-up for the tests of a record's path through both stages: a dual-screening session of the
team's dataset with exclusion reasons, its blinding ended by the owner (so every step can be
read back), and API clients with tokens."""

from __future__ import annotations

from typing import Any

from rest_framework.test import APIClient

from api.tokens import token_create
from screening import desk, services
from screening.models import Record, ScreeningSession

REASONS = ["Wrong population", "Wrong outcome"]


def api_of(user: Any) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_create(user=user, name='t')[1]}")
    return client


def dual_session(team: Any, *, labels: list[str] | None = None) -> ScreeningSession:
    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="Path",
                                      labels=labels or ["oncological"], reviewers_per_record=2)
    desk.session_desk_update(user=team.maintainer, session=session, criteria="",
                             include_terms="", exclude_terms="",
                             exclusion_reasons="\n".join(REASONS), screeners=[])
    return services.session_blinding_end(user=team.owner, session=session)


def both_decide(team: Any, session: ScreeningSession, values: tuple[dict[str, str], ...],
                position: int = 0) -> Record:
    """The record at `position`, decided by the two reviewers (their values in turn)."""
    record = session.records.get(position=position)
    for person, said in zip((team.reviewer, team.reviewer2), values, strict=True):
        services.decision_record(user=person, record=record, values=said)
    record.refresh_from_db()
    return record
