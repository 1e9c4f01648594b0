"""In chromium against gunicorn: answers outrun their saves, and the page still moves forward.

Every save is held on its way to the server (a route that keeps the request until the test
lets it go). The reviewer answers three records while the first save waits: the page must show
three different records, never hand back one whose save is still in flight, send the saves one
at a time, and once they go through, the server holds exactly the three answers, in order.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from screening import services
from screening.models import Decision
from tests.plugins.browser import log_in
from tests.screening_support import team_make

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]


def test_a_slow_save_never_hands_back_the_record_just_answered(
    app_server: Any, chromium_browser: Any, transactional_db: None, user: Any,
    media_root: Path,
) -> None:
    team = team_make(user)
    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="Onc",
                                      labels=["oncological"], ranker_every=100)
    url = app_server.url
    page = chromium_browser.new_context().new_page()
    page.set_default_timeout(20_000)
    log_in(page, url, "rita", "pw-123456")

    held: list[Any] = []  # every save is held until the test lets it go
    page.route("**/decide.json", lambda route: held.append(route))
    page.goto(f"{url}/screening/{session.pk}/screen/")

    titles: list[str] = []
    for key in ["y", "n", "y"]:
        title = page.locator("#record-title")
        expect(title).not_to_have_text("")
        expect(page.locator("#record-labels")).to_have_text("oncological: ?")
        titles.append(title.inner_text())
        page.keyboard.press(key)
        if len(titles) < 3:
            expect(title).not_to_have_text(titles[-1])
    assert len(set(titles)) == 3, titles

    page.wait_for_timeout(500)  # time for a second save to be sent, were saves not queued
    assert len(held) == 1, "answers are saved one at a time, in order"
    assert Decision.objects.filter(reviewer=team.reviewer).count() == 0
    deadline = time.monotonic() + 20
    while Decision.objects.filter(reviewer=team.reviewer).count() < 3:
        while held:
            held.pop(0).continue_()
        assert time.monotonic() < deadline, "the held answers never reached the server"
        page.wait_for_timeout(100)
    decided = list(Decision.objects.filter(reviewer=team.reviewer)
                   .order_by("decided_at", "pk").values_list("record__title", "value"))
    assert decided == [(titles[0], "yes"), (titles[1], "no"), (titles[2], "yes")]
