"""A ranker refresh whose worker was killed does not leave "ranker running" on for minutes.

Once a heartbeat's timeout has passed since the lock was stamped, the refresh is running only on
a live inference worker that was already up at the stamp. Otherwise the session's page and API
say it is not running, beat's maintenance sweep releases the lock with a reason on the session,
and the next refresh may take the lock.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from core.maintenance import maintenance_run
from core.models import WorkerHeartbeat
from screening import ranking, services
from screening.models import ScreeningSession
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db


def _session_locked(team: Any, *, ago: timedelta) -> ScreeningSession:  # noqa: F811
    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="x",
                                      labels=["oncological"])
    ScreeningSession.objects.filter(pk=session.pk).update(
        ranker_running_since=timezone.now() - ago)
    return session


def _inference_worker(*, started_ago: timedelta, hostname: str = "inference@host") -> None:
    now = timezone.now()
    WorkerHeartbeat.objects.create(hostname=hostname, host="host", pid=4242,
                                   queues=[settings.QUEUE_INFERENCE], pool="threads",
                                   state=WorkerHeartbeat.State.BUSY,
                                   started_at=now - started_ago, last_seen=now)


def _shown_running(team: Any, session: ScreeningSession) -> tuple[bool, bool]:  # noqa: F811
    api = APIClient()
    api.force_authenticate(team.maintainer)
    detail = api.get(f"/api/screening/{session.pk}/")
    assert detail.status_code == 200, detail.content
    page = Client()
    page.force_login(team.maintainer)
    polled = page.get(reverse("screening:summary_json", args=[session.pk]))
    assert polled.status_code == 200
    return detail.json()["ranker_running"], polled.json()["ranker_running"]


def test_a_lock_with_no_worker_left_is_shown_stopped_and_released_with_a_reason(team) -> None:  # noqa: F811
    session = _session_locked(team, ago=timedelta(minutes=2))
    assert _shown_running(team, session) == (False, False)
    assert any("ranker lock" in line for line in maintenance_run())
    session.refresh_from_db()
    assert session.ranker_running_since is None
    assert session.ranker_error == ranking.WORKER_STOPPED
    assert "refresh on the next decisions" in _api_error(team, session)
    assert ranking.ranker_lock_take(session_id=session.pk)


def test_a_worker_restarted_since_the_lock_was_taken_does_not_hold_it(team) -> None:  # noqa: F811
    session = _session_locked(team, ago=timedelta(minutes=2))
    _inference_worker(started_ago=timedelta(seconds=40))  # came back after the kill
    assert _shown_running(team, session) == (False, False)
    # The next ask takes the lock over even before the sweep has run.
    assert ranking.ranker_lock_take(session_id=session.pk)


def test_a_live_worker_that_was_up_at_the_stamp_keeps_the_lock(team) -> None:  # noqa: F811
    session = _session_locked(team, ago=timedelta(minutes=2))
    _inference_worker(started_ago=timedelta(hours=1))
    assert _shown_running(team, session) == (True, True)
    maintenance_run()
    session.refresh_from_db()
    assert session.ranker_running_since is not None
    assert session.ranker_error == ""
    assert not ranking.ranker_lock_take(session_id=session.pk)


def test_a_lock_younger_than_a_heartbeat_timeout_is_running(team) -> None:  # noqa: F811
    session = _session_locked(team, ago=timedelta(seconds=1))
    assert _shown_running(team, session) == (True, True)
    maintenance_run()
    session.refresh_from_db()
    assert session.ranker_running_since is not None


def _api_error(team: Any, session: ScreeningSession) -> str:  # noqa: F811
    api = APIClient()
    api.force_authenticate(team.maintainer)
    return api.get(f"/api/screening/{session.pk}/").json()["ranker_error"]
