"""In chromium against gunicorn: skip on the screen page (issue 51). The reviewer presses s
on a record and clicks Skip on the next; the page says "2 skipped, they come back at the end",
no decision is stored for either, and once she has answered the rest they come back, the one
skipped first first."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from screening import services
from screening.models import Decision, Skip
from tests.screening_desk_support import browser_page, team_with_records

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]


def _until(check: Any) -> None:
    deadline = time.monotonic() + 20
    while not check():
        assert time.monotonic() < deadline, "the server never got there"
        time.sleep(0.1)


def test_a_reviewer_skips_two_records_and_they_come_back_at_the_end(
    app_server: Any, chromium_browser: Any, transactional_db: None, user: Any,
    media_root: Path,
) -> None:
    team = team_with_records(user, 5)
    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="Skip",
                                      labels=["oncological"], ranker_every=1000)
    url = app_server.url
    errors: list[str] = []
    page = browser_page(chromium_browser, url, "rita", errors)
    page.goto(f"{url}/screening/{session.pk}/screen/")
    title = page.locator("#record-title")
    expect(title).not_to_have_text("")
    first = title.inner_text()
    page.keyboard.press("s")
    expect(title).not_to_have_text(first)
    second = title.inner_text()
    page.click("#btn-skip")
    expect(title).not_to_have_text(second)
    expect(page.locator("#skipped-said")).to_have_text("2 skipped, they come back at the end")
    _until(lambda: Skip.objects.filter(reviewer=team.reviewer).count() == 2)
    assert not Decision.objects.exists()
    seen = []
    for _ in range(3):
        seen.append(title.inner_text())
        page.keyboard.press("n")
        expect(title).not_to_have_text(seen[-1])
    expect(title).to_have_text(first)
    page.keyboard.press("n")
    expect(title).to_have_text(second)
    page.keyboard.press("n")
    expect(page.locator("#screen-done")).to_be_visible()
    _until(lambda: Decision.objects.filter(reviewer=team.reviewer).count() == 5)
    assert first not in seen
    assert second not in seen
    assert errors == []
