"""In chromium against gunicorn, at 1,400 x 900: a day's work on the screen page (issue 50).

Every record's abstract runs to 6,000 words, yet the Include / Exclude / Unsure buttons are in
the window without scrolling; the record's authors, year, journal and keywords show above the
abstract; the reviewer's last decisions list the record by its title; and after logging out
and in again the reviewer lands in the project she chose last, not her personal one.
"""

from __future__ import annotations

import csv
import io
import time
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from playwright.sync_api import expect

from dataset_management.services import dataset_create_from_upload
from screening import services
from screening.models import Decision
from tests.plugins.browser import log_in
from tests.screening_desk_support import PASSWORD
from tests.screening_support import team_make

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

WIDTH, HEIGHT = 1400, 900
WORDS = 6000
TITLES = ["Statins after myocardial infarction", "Gait training after ischaemic stroke",
          "Serum tumour markers in screening"]


def _long_abstract(i: int) -> str:
    words = ["outcome", "cohort", "patients", "therapy", "randomised", "follow-up",
             "mortality", "adults", "hospital", "dose"]
    return " ".join(words[(i + n) % len(words)] for n in range(WORDS)) + "."


def _dataset(owner: Any, project: Any) -> Any:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["title", "abstract", "authors", "journal", "year", "keywords", "label"])
    for i, title in enumerate(TITLES):
        writer.writerow([title, _long_abstract(i), f"Novak P; Lee K{i}", "European Heart Journal",
                         str(2019 + i), "secondary prevention; statins",
                         "cardiovascular" if i % 2 else "oncological"])
    return dataset_create_from_upload(owner=owner, project=project, name="Long abstracts",
                                      uploaded_file=SimpleUploadedFile("long.csv",
                                                                       out.getvalue().encode()))


def _in_view(page: Any, selector: str) -> None:
    box = page.locator(selector).bounding_box()
    assert box is not None, f"{selector} is not drawn"
    assert box["x"] >= 0, (selector, box)
    assert box["y"] >= 0, (selector, box)
    assert box["x"] + box["width"] <= WIDTH, (selector, box)
    assert box["y"] + box["height"] <= HEIGHT, (selector, box)


def _stored(reviewer: Any, count: int) -> None:
    deadline = time.monotonic() + 20
    while Decision.objects.filter(reviewer=reviewer).count() < count:
        assert time.monotonic() < deadline, "the answers never reached the server"
        time.sleep(0.1)


def test_a_days_work_keeps_the_buttons_in_view_shows_the_citation_and_the_last_project(
    app_server: Any, chromium_browser: Any, transactional_db: None, user: Any,
    media_root: Path,
) -> None:
    team = team_make(user)
    session = services.session_create(user=team.maintainer, dataset=_dataset(user, team.project),
                                      name="Day", labels=["relevant"], ranker_every=1000)
    url = app_server.url
    errors: list[str] = []
    context = chromium_browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    page = context.new_page()
    page.set_default_timeout(20_000)
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.on("pageerror", lambda e: errors.append(str(e)))
    log_in(page, url, "rita", PASSWORD)
    expect(page.locator("#dashboard-project")).to_have_text("rita's project")
    page.click(".project-switcher summary")
    page.click("button.project-menu-item:has-text('Screening team')")
    expect(page.locator("#dashboard-project")).to_have_text("Screening team")

    page.goto(f"{url}/screening/{session.pk}/screen/")
    title = page.locator("#record-title")
    expect(title).not_to_be_empty()
    first = title.inner_text()
    assert first in TITLES
    at = TITLES.index(first)
    assert len(page.locator("#record-abstract").inner_text().split()) == WORDS
    for button in ("#btn-include", "#btn-exclude", "#btn-unsure"):
        _in_view(page, button)
    assert page.evaluate("window.scrollY") == 0  # in view without scrolling
    expect(page.locator("#record-authors")).to_have_text(f"Novak P, Lee K{at}")
    expect(page.locator("#record-year")).to_contain_text(str(2019 + at))
    expect(page.locator("#record-journal")).to_contain_text("European Heart Journal")
    expect(page.locator("#record-keywords .keyword")).to_have_text(
        ["secondary prevention", "statins"])
    _in_view(page, "#record-citation")

    page.click("#btn-include")
    expect(title).not_to_have_text(first)
    for button in ("#btn-include", "#btn-exclude", "#btn-unsure"):
        _in_view(page, button)  # the next long record too
    second = title.inner_text()
    page.keyboard.press("n")
    expect(page.locator("#save-status")).to_have_text("All saved.")
    _stored(team.reviewer, 2)
    log = page.locator("#save-log li .save-title")
    expect(log).to_have_text([second, first])  # newest first, by title
    expect(page.locator("#save-log")).not_to_contain_text("Record ")

    page.click("button:has-text('Log out')")
    page.wait_for_url(f"{url}/accounts/login/**")
    log_in(page, url, "rita", PASSWORD)
    expect(page.locator("#dashboard-project")).to_have_text("Screening team")
    assert not errors, errors
