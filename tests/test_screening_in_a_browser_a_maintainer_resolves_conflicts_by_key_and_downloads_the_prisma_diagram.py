"""In chromium against gunicorn: a maintainer resolves a blind session's conflicts one after the
other with the keyboard (n, then y) with each record in view, then opens the PRISMA 2020 page:
the diagram is drawn inline (the CSP allows it: no inline style or script) and its SVG and PNG
download. A reviewer's session page says the conflicts are hidden while blind."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from screening.models import Record
from tests.plugins.browser import log_in
from tests.screening_review_support import both_decide, cited_dataset_make, dual_session_make
from tests.screening_support import team_make

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]
PASSWORD = "pw-123456"  # tests.screening_support gives the team this password


def _page(browser: Any, url: str, username: str, password: str, errors: list[str]) -> Any:
    page = browser.new_context(viewport={"width": 1280, "height": 1000},
                               accept_downloads=True).new_page()
    page.set_default_timeout(20_000)
    page.on("console", lambda m: m.type == "error" and errors.append(f"{username}: {m.text}"))
    page.on("pageerror", lambda e: errors.append(f"{username}: {e}"))
    log_in(page, url, username, password)
    return page


def test_conflicts_by_key_then_the_prisma_diagram(
    app_server: Any, chromium_browser: Any, transactional_db: None, user: Any,
    media_root: Path, screenshot_dir: Path, tmp_path: Path,
) -> None:
    team = team_make(user)
    # ranker_every above the collection's size: no refresh is sent (no worker runs here).
    session = dual_session_make(team, cited_dataset_make(team), ranker_every=100)
    # The conflicts page goes in the records' order.
    first, second = sorted([both_decide(team, session, "yes", "no"),
                            both_decide(team, session, "no", "yes")], key=lambda r: r.position)
    url, errors = app_server.url, []

    rita = _page(chromium_browser, url, "rita", PASSWORD, errors)
    rita.goto(f"{url}/screening/{session.pk}/")
    expect(rita.locator("#conflicts-hidden")).to_be_visible()
    assert "note-by-remy" not in rita.content()

    mona = _page(chromium_browser, url, "mona", PASSWORD, errors)
    mona.goto(f"{url}/screening/{session.pk}/")
    mona.click("#resolve-one-by-one")
    expect(mona.locator("#conflict-position")).to_contain_text("Conflict 1 of 2")
    card = mona.locator("#conflict")
    expect(card).to_have_attribute("data-record", str(first.pk))
    expect(card.locator(".record-ids")).to_contain_text(first.identifiers["pmid"])
    expect(card.locator(".record-abstract")).to_have_text(first.abstract)
    expect(card).to_contain_text("note-by-remy")
    mona.screenshot(path=str(screenshot_dir / "screening-conflict-in-view.png"), full_page=True)
    mona.keyboard.press("n")
    expect(mona.locator("#conflict-position")).to_contain_text("Conflict 1 of 1")
    expect(mona.locator("#conflict")).to_have_attribute("data-record", str(second.pk))
    mona.keyboard.press("y")
    expect(mona.locator("#no-conflicts")).to_be_visible()
    finals = dict(Record.objects.filter(pk__in=[first.pk, second.pk])
                  .values_list("pk", "final"))
    assert finals == {first.pk: {"oncological": "no"}, second.pk: {"oncological": "yes"}}

    mona.goto(f"{url}/screening/{session.pk}/")
    mona.click("#prisma-link")
    diagram = mona.locator("#prisma-diagram svg")
    expect(diagram).to_be_visible()
    expect(diagram).to_contain_text("Records screened (n = 2)")  # the two resolved
    assert diagram.bounding_box()["height"] > 400
    expect(mona.locator("#prisma-table")).to_be_visible()
    mona.screenshot(path=str(screenshot_dir / "screening-prisma.png"), full_page=True)
    for link, suffix in (("#prisma-svg", ".svg"), ("#prisma-png", ".png")):
        with mona.expect_download() as download:
            mona.click(link)
        saved = tmp_path / f"prisma{suffix}"
        download.value.save_as(saved)
        assert saved.stat().st_size > 1000
    assert errors == []
