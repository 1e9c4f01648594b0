"""A PostgreSQL connection cut under a request (its backend terminated, as a restart or a
proxy's cut does) is retried once on a fresh connection before any answer is sent: the reviewer
gets 200, never a 500, and the decision is stored exactly once; so does one cut between two
requests. A cut on the retry too is answered, not retried again."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.db import connection

from screening.models import Decision
from tests.screening_state_support import api_of, dual_session
from tests.screening_support import team  # noqa: F401

pytestmark = [pytest.mark.django_db(transaction=True),
              pytest.mark.pg("a connection dropped by PostgreSQL itself (pg_terminate_backend)")]


@pytest.fixture(autouse=True)
def on_postgresql() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL terminates a backend; a SQLite file has no connection to cut")


def terminate_backend(pid: int) -> None:
    """Cut `pid` from a second connection, as an operator or a restart would, and wait until
    PostgreSQL has ended it."""
    import psycopg

    db = connection.settings_dict
    with psycopg.connect(dbname=db["NAME"], user=db["USER"] or "postgres",
                         host=db["HOST"] or "127.0.0.1", port=db["PORT"] or 5432,
                         password=db["PASSWORD"] or None, autocommit=True) as other:
        other.execute("SELECT pg_terminate_backend(%s)", (pid,))
        for _ in range(200):
            if not other.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s",
                                 (pid,)).fetchone():
                return
            time.sleep(0.01)
    raise AssertionError(f"backend {pid} is still there")


@contextmanager
def cut_before(table: str, *, times: int) -> Iterator[list[int]]:
    """Terminate this connection's backend just before each of its first `times` queries that
    touch `table`; yields the pids cut."""
    cut: list[int] = []

    def wrapper(execute: Callable[..., Any], sql: str, params: Any, many: bool,
                context: dict[str, Any]) -> Any:
        if len(cut) < times and table in sql:
            cut.append(connection.connection.info.backend_pid)
            terminate_backend(cut[-1])
        return execute(sql, params, many, context)

    with connection.execute_wrapper(wrapper):
        yield cut


def decide(client: Any, session: Any, record: Any) -> Any:
    return client.post(f"/api/screening/{session.pk}/decide/", {
        "record": record.pk, "values": {"oncological": "yes"}}, format="json")


def test_a_cut_under_a_decision_is_retried_and_the_decision_stored_once(
        team: Any, caplog: Any) -> None:  # noqa: F811
    session = dual_session(team)
    record = session.records.get(position=0)
    rita = api_of(team.reviewer)
    # The first run's error is still reported (logs, error tracking); the answer is the retry's.
    rita.raise_request_exception = False
    with cut_before("screening_decision", times=1) as cut:
        response = decide(rita, session, record)
    assert len(cut) == 1
    assert response.status_code == 200, response.content[:500]
    assert "database connection dropped" in caplog.text
    assert Decision.objects.filter(record=record, reviewer=team.reviewer).count() == 1
    assert connection.connection.info.backend_pid != cut[0]


def test_a_cut_between_requests_is_survived_by_the_next_one(team: Any) -> None:  # noqa: F811
    session = dual_session(team)
    rita = api_of(team.reviewer)
    rita.raise_request_exception = False
    first, second = session.records.get(position=0), session.records.get(position=1)
    assert decide(rita, session, first).status_code == 200
    terminate_backend(connection.connection.info.backend_pid)
    assert decide(rita, session, second).status_code == 200
    assert Decision.objects.filter(reviewer=team.reviewer).count() == 2


def test_a_cut_on_the_retry_too_is_answered_once_and_stores_nothing(
        team: Any) -> None:  # noqa: F811
    session = dual_session(team)
    record = session.records.get(position=0)
    rita = api_of(team.reviewer)
    rita.raise_request_exception = False
    with cut_before("screening_decision", times=2) as cut:
        response = decide(rita, session, record)
    assert len(cut) == 2
    assert response.status_code == 500
    assert not Decision.objects.filter(record=record).exists()
