"""In chromium against gunicorn: the full-text stage end to end (issue 35, item 6).

Two records were included at title/abstract. The reviewer opens the full-text list, attaches one
report's PDF (written byte by byte by the test) through the page's form, reads its extracted
text with the session's terms marked, and excludes it with one of the session's reasons; the
other report is marked not retrieved. Every page runs under the content security policy with
no script error. Screenshots go to test-artifacts/screenshots.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from screening import desk, selectors, services
from screening.models import FullTextReport, Record
from tests.pdf_support import pdf_bytes
from tests.screening_desk_support import browser_page, team_with_records

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]


def test_a_reviewer_attaches_a_report_and_excludes_it_with_a_reason(
    app_server: Any, chromium_browser: Any, transactional_db: None, user: Any,
    media_root: Path, tmp_path: Path, screenshot_dir: Path,
) -> None:
    team = team_with_records(user, 8)
    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="FT",
                                      labels=["oncological"], ranker_every=1000)
    desk.session_desk_update(user=team.maintainer, session=session,
                             criteria="Include: randomised trials in adults.",
                             include_terms="randomised", exclude_terms="children",
                             exclusion_reasons="Wrong population\nWrong design", screeners=[])
    first = selectors.record_next(user=team.reviewer, session=session)
    services.decision_record(user=team.reviewer, record=first, values={"oncological": "yes"})
    second = selectors.record_next(user=team.reviewer, session=session)
    services.decision_record(user=team.reviewer, record=second, values={"oncological": "yes"})
    report = tmp_path / "report.pdf"
    report.write_bytes(pdf_bytes(["A randomised trial of statins in 40 children.",
                                  "Results: no difference."]))

    url = app_server.url
    errors: list[str] = []
    page = browser_page(chromium_browser, url, "rita", errors)
    page.goto(f"{url}/screening/{session.pk}/screen/")
    expect(page.locator("#record-title")).not_to_have_text("")
    page.screenshot(path=str(screenshot_dir / "screening-screen-page.png"), full_page=True)
    page.click("#fulltext-link")
    expect(page.locator("#fulltext-table tbody tr")).to_have_count(2)
    page.click(f"#fulltext-table tr[data-record='{first.pk}'] a")
    page.set_input_files("#ft-upload input[type=file]", str(report))
    page.click("#ft-upload button")
    expect(page.locator("#ft-status")).to_contain_text("Retrieved: 2 pages")
    expect(page.locator("#ft-text mark.term.include")).to_have_text("randomised")
    expect(page.locator("#ft-text mark.term.exclude")).to_have_text("children")
    page.check("#ft-decide input[value=no]")
    page.select_option("#ft-decide select", "Wrong population")
    page.click("#ft-decide-button")
    expect(page.locator("#ft-final")).to_have_text("Final: oncological no (Wrong population)")
    page.screenshot(path=str(screenshot_dir / "screening-full-text.png"), full_page=True)

    page.goto(f"{url}/screening/{session.pk}/fulltext/{second.pk}/")
    page.fill("#ft-not-retrieved input[name=reason]", "Conference abstract only")
    page.click("#ft-not-retrieved button")
    expect(page.locator("#ft-status")).to_have_text("Not retrieved: Conference abstract only")
    expect(page.locator("#ft-decide")).to_have_count(0)

    assert Record.objects.get(pk=first.pk).fulltext_reasons == {
        "oncological": "Wrong population"}
    assert FullTextReport.objects.get(record=first).pages == 2
    assert FullTextReport.objects.get(record=second).status == "not_retrieved"
    assert not errors, errors
