"""In chromium against gunicorn: undo meets a resolution (issue 35, items 4 and 5).

Rita and Remy disagree on a record and a maintainer resolves it. Rita presses z on the screen
page and changes her answer: the server refuses (her decision can no longer change), and the
page says so: the save is listed as not saved with the reason, the error stays on screen, and
nothing is retried or stored. Pressing z again and giving her original answer is accepted (a
repeat is not a change); the refusal is then marked as answered again and the error goes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from screening import selectors, services
from screening.models import Decision
from tests.screening_desk_support import browser_page, team_with_records

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]


def test_undo_of_a_resolved_decision_is_refused_and_said(
    app_server: Any, chromium_browser: Any, transactional_db: None, user: Any,
    media_root: Path,
) -> None:
    team = team_with_records(user, 6)
    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="Undo",
                                      labels=["oncological"], reviewers_per_record=2,
                                      ranker_every=1000)
    record = selectors.record_next(user=team.reviewer, session=session)
    services.decision_record(user=team.reviewer, record=record, values={"oncological": "yes"})
    services.decision_record(user=team.reviewer2, record=record, values={"oncological": "no"})
    services.conflict_resolve(user=team.maintainer, record=record, label="oncological",
                              value="no")
    errors: list[str] = []
    page = browser_page(chromium_browser, app_server.url, "rita", errors)
    page.goto(f"{app_server.url}/screening/{session.pk}/screen/")
    title = page.locator("#record-title")
    expect(title).not_to_have_text("")
    page.wait_for_load_state("networkidle")  # recent.json: the decided record, for undo
    page.keyboard.press("z")
    expect(title).to_have_text(record.title)
    # Blind: not marked resolved beforehand, since a resolution tells that Remy disagreed
    # (issue 50); the refusal below says it once she tries to change it.
    expect(page.locator("#record-labels")).not_to_contain_text("resolved by a maintainer")
    page.keyboard.press("n")
    refused = page.locator(f"#save-log li[data-record='{record.pk}'][data-state='refused']")
    expect(refused).to_contain_text("can no longer change")
    expect(page.locator("#screen-error")).to_contain_text(
        f"Record {record.position + 1} was not saved")
    expect(page.locator("#save-status")).to_have_text("All saved.")  # nothing left to retry
    assert Decision.objects.get(reviewer=team.reviewer, record=record).value == "yes"

    page.keyboard.press("z")
    expect(title).to_have_text(record.title)
    page.keyboard.press("y")
    expect(page.locator(f"#save-log li[data-record='{record.pk}'][data-state='saved']")
           ).to_have_count(1)
    expect(page.locator(f"#save-log li[data-record='{record.pk}'][data-state='superseded']")
           ).to_have_count(1)
    expect(page.locator("#screen-error")).to_be_hidden()
    assert Decision.objects.get(reviewer=team.reviewer, record=record).value == "yes"
    assert [e for e in errors if "400" not in e] == [], errors
