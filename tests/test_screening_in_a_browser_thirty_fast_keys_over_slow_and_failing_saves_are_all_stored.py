"""In chromium against gunicorn: a reviewer answers 30 records as fast as keys go while every
save is slow, and one save fails; all 30 are stored (issue 35, "no decision lost").

Every request to decide.json is held 300 ms on its way (playwright's route), and the fifth one
is answered 503 by the route itself, never reaching the server. The keys go without waiting for
anything on the page: keys pressed while the next record is still loading must be queued and
replayed, not dropped. While saves are pending the page lists them as unsaved or saving, and
closing it asks first (beforeunload); the failed save is retried with backoff and comes back.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from screening import services
from screening.models import Decision
from tests.screening_desk_support import browser_page, team_with_records

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

RECORDS = 34
KEYS = ["y", "n", "u", "n", "y", "n"] * 5   # 30 answers
SLOW = 0.3  # seconds each save is held on its way


def test_thirty_fast_keys_over_slow_and_failing_saves_are_all_stored(
    app_server: Any, chromium_browser: Any, transactional_db: None, user: Any,
    media_root: Path,
) -> None:
    team = team_with_records(user, RECORDS)
    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="Fast",
                                      labels=["oncological"], ranker_every=1000)
    errors: list[str] = []
    page = browser_page(chromium_browser, app_server.url, "rita", errors)

    # Every save is held SLOW seconds before it goes on (the fifth is answered 503 instead):
    # routes are let go from this thread, between keys and after them, as their time comes.
    held: list[tuple[float, Any]] = []
    sent = [0]

    def hold(route: Any) -> None:
        held.append((time.monotonic(), route))

    def release_due() -> None:
        while held and time.monotonic() - held[0][0] >= SLOW:
            _, route = held.pop(0)
            sent[0] += 1
            if sent[0] == 5:  # the network fails this one: the server never sees it
                route.fulfill(status=503, content_type="application/json",
                              body='{"detail": "Service unavailable"}')
            else:
                route.continue_()

    page.route("**/decide.json", hold)
    page.goto(f"{app_server.url}/screening/{session.pk}/screen/")
    expect(page.locator("#record-title")).not_to_have_text("")
    for key in KEYS:
        page.keyboard.press(key)
        release_due()

    # Saves are still on their way: the page says so, and leaving asks first.
    expect(page.locator("#save-status")).to_contain_text("unsaved")
    assert page.locator("#save-log li[data-state='saved']").count() < len(KEYS)
    dialogs: list[str] = []

    def on_dialog(dialog: Any) -> None:
        dialogs.append(dialog.type)
        dialog.dismiss()   # stay on the page

    page.on("dialog", on_dialog)
    page.close(run_before_unload=True)
    page.wait_for_timeout(500)
    assert dialogs == ["beforeunload"]
    assert not page.is_closed()

    deadline = time.monotonic() + 90
    while page.locator("#save-status").inner_text() != "All saved.":
        assert time.monotonic() < deadline, page.locator("#save-status").inner_text()
        release_due()
        page.wait_for_timeout(50)
    stored = Decision.objects.filter(reviewer=team.reviewer, record__session=session)
    assert stored.count() == len(KEYS)
    assert stored.values("record").distinct().count() == len(KEYS)
    # The records were answered in the order shown, each with the key pressed on it.
    answered = list(stored.order_by("decided_at", "pk").values_list("value", flat=True))
    assert answered == [{"y": "yes", "n": "no", "u": "unsure"}[k] for k in KEYS]
    assert sent[0] == len(KEYS) + 1, "the failed save was sent again, and only it"
    assert page.locator("#save-log li[data-state='saved']").count() == 12  # the log's length
    expect(page.locator("#mine-today")).to_have_text(str(len(KEYS)))
    assert not [e for e in errors if "503" not in e], errors
