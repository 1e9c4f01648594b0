"""In chromium against gunicorn: a day's work on the screen page (issue 35, item 5).

The maintainer writes the criteria, terms and reasons on the desk page; every record's title
holds markup that would run script if it were parsed. The reviewer sees the criteria beside the
record, the terms highlighted as <mark> elements and the markup as plain characters; answers
with the visible buttons and with keys, gives a "no" a reason by its number key, watches her
progress count up, and presses z to change her last answer, which the server then holds.
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

HOSTILE = '<img src=x onerror="document.title=\'pwned\'"> Tumour cohort {} : a case report'


def _stored(reviewer: Any, count: int) -> None:
    deadline = time.monotonic() + 20
    while Decision.objects.filter(reviewer=reviewer).count() < count:
        assert time.monotonic() < deadline, "the answers never reached the server"
        time.sleep(0.1)


def test_a_reviewer_screens_with_criteria_highlights_buttons_reasons_and_undo(
    app_server: Any, chromium_browser: Any, transactional_db: None, user: Any,
    media_root: Path,
) -> None:
    team = team_with_records(user, 8, titles=[HOSTILE.format(i) for i in range(8)])
    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="Day",
                                      labels=["oncological"], ranker_every=1000)
    url = app_server.url
    errors: list[str] = []
    mona = browser_page(chromium_browser, url, "mona", errors)
    mona.goto(f"{url}/screening/{session.pk}/desk/")
    mona.fill("#id_criteria", "Include: adults with a solid tumour.")
    mona.fill("#id_include_terms", "tumour")
    mona.fill("#id_exclude_terms", "case report")
    mona.fill("#id_exclusion_reasons", "Wrong population\nWrong design")
    mona.click("#desk-save")
    mona.wait_for_url(f"{url}/screening/{session.pk}/")  # the desk returns to the session

    page = browser_page(chromium_browser, url, "rita", errors)
    page.goto(f"{url}/screening/{session.pk}/screen/")
    expect(page.locator("#criteria-text")).to_contain_text("adults with a solid tumour.")
    title = page.locator("#record-title")
    expect(title).to_contain_text("<img src=x onerror=")
    assert page.locator("#record-title img").count() == 0
    expect(page.locator("#record-title mark.term.include")).to_have_text("Tumour")
    expect(page.locator("#record-title mark.term.exclude")).to_have_text("case report")
    expect(page.locator("#mine-today")).to_have_text("0")

    first = title.inner_text()
    page.click("#btn-include")                     # the visible button
    expect(title).not_to_have_text(first)
    second = title.inner_text()
    page.keyboard.press("2")                       # the second reason: Wrong design
    expect(page.locator("#record-reason")).to_have_value("Wrong design")
    page.keyboard.press("n")
    expect(title).not_to_have_text(second)
    third = title.inner_text()
    page.click("#btn-unsure")
    expect(page.locator("#mine-today")).to_have_text("3")
    _stored(team.reviewer, 3)

    page.keyboard.press("z")                       # undo: the unsure record comes back
    expect(title).to_have_text(third)
    expect(page.locator("#record-again")).to_be_visible()
    expect(page.locator("#record-labels")).to_contain_text("(was unsure)")
    page.keyboard.press("y")
    expect(page.locator("#save-status")).to_have_text("All saved.")
    mine = dict(Decision.objects.filter(reviewer=team.reviewer).values_list(
        "record__title", "value"))
    assert mine == {first: "yes", second: "no", third: "yes"}
    assert Decision.objects.get(reviewer=team.reviewer, record__title=second
                                ).exclusion_reason == "Wrong design"
    # After the undone record, the one that was on screen before z comes back, then new ones.
    expect(title).not_to_have_text(third)
    assert title.inner_text() not in (first, second, third)
    assert page.title() != "pwned"
    assert mona.title() != "pwned"
    assert not errors, errors
