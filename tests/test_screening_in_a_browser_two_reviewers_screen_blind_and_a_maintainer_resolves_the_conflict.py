"""In chromium against gunicorn: two reviewers screen one session blind with the keyboard.

Rita screens three records (y, n, y, with a note on the third); Remy, in a browser context of his
own, gets the same three and never sees her answers or her note; he disagrees on the third. The
maintainer's session page, never reloaded, follows along: the records remaining, the stopping
panel's figures, kappa and the conflict all arrive by polling. She resolves the conflict there.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from projects import services as project_services
from screening import services
from screening.models import Decision, Record
from tests.screening_desk_support import browser_page
from tests.screening_support import team_make

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def _wait_for_decisions(reviewer: Any, count: int, timeout: float = 20.0) -> None:
    """The page saves in the background: wait until the server holds the reviewer's answers."""
    deadline = time.monotonic() + timeout
    while Decision.objects.filter(reviewer=reviewer).count() < count:
        assert time.monotonic() < deadline, f"{reviewer} has not {count} decisions saved"
        time.sleep(0.1)


def _screen(page: Any, answers: list[str], note_on_last: str = "") -> list[str]:
    """Answer the records on screen one by one with the keyboard; the titles answered."""
    titles = []
    for i, key in enumerate(answers):
        title = page.locator("#record-title")
        expect(title).not_to_have_text("")
        titles.append(title.inner_text())
        expect(page.locator("#record-labels")).to_have_text("oncological: ?")
        if note_on_last and i == len(answers) - 1:
            page.fill("#record-note", note_on_last)
            page.locator("#record-note").blur()
        page.keyboard.press(key)
        expect(page.locator("#record-title")).not_to_have_text(titles[-1])
    return titles


def test_two_reviewers_screen_blind_and_a_maintainer_resolves_the_conflict(
    app_server: Any, chromium_browser: Any, transactional_db: None, user: Any,
    media_root: Path, screenshot_dir: Path,
) -> None:
    team = team_make(user)
    # ranker_every above the collection's size: no refresh is sent (no worker runs here).
    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="Onc",
                                      labels=["oncological"], reviewers_per_record=2,
                                      ranker_every=100)
    total = Record.objects.filter(session=session).count()
    url = app_server.url
    errors: list[str] = []

    mona = browser_page(chromium_browser, url, "mona", errors)
    mona.goto(f"{url}/screening/{session.pk}/")
    expect(mona.locator("#remaining")).to_have_text(str(total))
    needed_before = mona.inner_text("#stopping-table tr[data-label='oncological'] .needed")
    expect(mona.locator("#conflicts")).to_contain_text("No conflicts.")
    mona.evaluate("window.notReloaded = true")

    rita = browser_page(chromium_browser, url, "rita", errors)
    rita.goto(f"{url}/screening/{session.pk}/screen/")
    rita_titles = _screen(rita, ["y", "n", "y"], note_on_last="rita thinks this is a tumour")
    _wait_for_decisions(team.reviewer, 3)
    # Nothing is final with one reviewer of two: the panel still counts every record.
    expect(mona.locator("#remaining")).to_have_text(str(total))

    remy = browser_page(chromium_browser, url, "remy", errors)
    remy.goto(f"{url}/screening/{session.pk}/screen/")
    expect(remy.locator("#record-title")).to_have_text(rita_titles[0])
    # Her record, without her answer or her name (_screen asserts "?" on each of the three).
    assert "rita" not in remy.inner_text("main")
    remy_titles = _screen(remy, ["y", "n", "n"])
    assert remy_titles == rita_titles
    assert "rita thinks" not in remy.content()
    _wait_for_decisions(team.reviewer2, 3)
    remy.screenshot(path=str(screenshot_dir / "screening-blind.png"), full_page=True)

    # The session page, not reloaded, has followed: two records agreed, one in conflict.
    expect(mona.locator("#remaining")).to_have_text(str(total - 2))
    expect(mona.locator("#stopping-table tr[data-label='oncological'] .needed")
           ).not_to_have_text(needed_before)
    expect(mona.locator("#agreement-table tr[data-label='oncological'] .n")).to_have_text("3")
    expect(mona.locator("#agreement-table tr[data-label='oncological'] .kappa")
           ).to_contain_text("κ = 0.40 [")
    expect(mona.locator("#conflict-count")).to_have_text("1")
    conflict = mona.locator("#conflicts .conflict")
    expect(conflict).to_contain_text(rita_titles[2])
    expect(conflict).to_contain_text("rita said yes")
    expect(conflict).to_contain_text("remy said no")
    assert mona.evaluate("window.notReloaded") is True
    mona.screenshot(path=str(screenshot_dir / "screening-conflict.png"), full_page=True)

    conflict.locator("input[name=note]").fill("metastasis counts")
    conflict.locator("button[value=yes]").click()
    expect(mona.locator("#conflicts")).to_contain_text("No conflicts.")
    expect(mona.locator("#remaining")).to_have_text(str(total - 3))
    expect(mona.locator("#agreement-table tr[data-label='oncological'] .kappa")
           ).to_contain_text("κ = 0.40 [")
    resolved = Record.objects.get(session=session, title=rita_titles[2])
    assert resolved.final == {"oncological": "yes"}
    assert resolved.done
    assert errors == []

    # Remy is removed from the project mid-session: his next key is refused, and said why.
    project_services.member_remove(user=user, project=team.project, member=team.reviewer2)
    remy.keyboard.press("y")
    expect(remy.locator("#screen-error")).to_contain_text(
        "no longer a member of this project: your 3 decision(s) stay")
    assert Decision.objects.filter(reviewer=team.reviewer2).count() == 3
    # The refusals are the only errors the pages logged (chromium logs each 403 it got).
    assert errors, "chromium logged no 403"
    assert all("status of 403" in e for e in errors), errors
