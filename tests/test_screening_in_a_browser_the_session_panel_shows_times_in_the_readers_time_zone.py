"""Issue 35, item 8: the stopping panel's times are shown as local times. The server writes
them in UTC (ISO 8601 in <time datetime>); a reader in Auckland (UTC+13 in November) reads the
ranking's refresh and the stop in their own time, on the page as loaded and as polled."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from screening import services
from screening.models import ScreeningSession
from tests.screening_desk_support import browser_page, team_with_records

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]


def test_the_panel_shows_the_refresh_and_the_stop_in_the_readers_time_zone(
    app_server: Any, chromium_browser: Any, transactional_db: None, user: Any,
    media_root: Path,
) -> None:
    team = team_with_records(user, 6)
    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="Times",
                                      labels=["oncological"], ranker_every=1000)
    session = services.session_stop(user=team.maintainer, session=session, force=True)
    why = {**session.stop_justification, "stopped_at": "2026-11-28T10:45:00+00:00"}
    ScreeningSession.objects.filter(pk=session.pk).update(
        ranking_refreshed_at=datetime(2026, 11, 28, 10, 30, tzinfo=UTC),
        stop_justification=why)
    errors: list[str] = []
    mona = browser_page(chromium_browser, app_server.url, "mona", errors,
                        timezone_id="Pacific/Auckland", locale="en-GB")
    mona.goto(f"{app_server.url}/screening/{session.pk}/")
    # 10:30 and 10:45 UTC are 23:30 and 23:45 in Auckland.
    expect(mona.locator("#ranking time")).to_have_text("28/11/2026, 23:30:00")
    expect(mona.locator("#stop-justification time")).to_have_text("28/11/2026, 23:45:00")
    # The poll (every 2 s) writes the refresh again, in local time too.
    mona.wait_for_timeout(2_500)
    expect(mona.locator("#ranking")).to_have_text(
        "Ranked on the decisions so far; the next refresh names its ranker"
        " · Ranking refreshed 28/11/2026, 23:30:00")
    assert not errors, errors
