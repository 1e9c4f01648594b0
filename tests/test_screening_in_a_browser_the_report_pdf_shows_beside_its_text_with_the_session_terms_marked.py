"""In chromium against gunicorn: the full-text record page shows the report's PDF beside its
extracted text (issue 50). pdf.js, vendored and run under the Content-Security-Policy with its
worker from this origin, draws each page to a canvas (pixels other than white) with a text
layer holding the PDF's words, and the session's include and exclude terms are marked in that
layer as in the extracted text. The reviewer gets there through the bulk upload, which matched
the PDF by the DOI in its name. No script error, no CSP refusal. Screenshot in
test-artifacts/screenshots.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.fulltext_reports_support import reports_make
from tests.pdf_support import pdf_bytes
from tests.screening_desk_support import browser_page

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

INKED = """canvas => {
    const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
    let inked = 0;
    for (let i = 0; i < data.length; i += 4) {
        if (data[i] < 200 && data[i + 3] > 0) inked += 1;
    }
    return inked;
}"""


def test_the_report_pdf_shows_beside_its_text_with_the_terms_marked(
    app_server: Any, chromium_browser: Any, transactional_db: None, user: Any,
    media_root: Path, tmp_path: Path, screenshot_dir: Path,
) -> None:
    made = reports_make(user, include_terms="randomised", exclude_terms="children")
    session, record = made.session, made.records[0]
    report = tmp_path / "10.1000_statins.2020.01.pdf"
    report.write_bytes(pdf_bytes(["A randomised trial of statins in 40 children.",
                                  "Results: fewer events."]))

    url = app_server.url
    errors: list[str] = []
    page = browser_page(chromium_browser, url, "rita", errors)
    page.goto(f"{url}/screening/{session.pk}/fulltext/")
    page.click("#fulltext-bulk-link")
    page.set_input_files("#ft-bulk input[type=file]", str(report))
    page.click("#ft-bulk button")
    row = page.locator(f"#ft-bulk-results tr[data-record='{record.pk}']")
    expect(row.locator(".outcome")).to_have_text("attached")
    expect(row.locator(".how")).to_have_text("doi")
    row.locator("a").click()

    viewer = page.locator("#ft-viewer")
    expect(viewer).to_have_attribute("data-state", "ready")
    expect(viewer.locator(".ft-viewer-status")).to_have_text("2 pages")
    first = viewer.locator(".ft-page[data-page='1']")
    expect(first).to_have_attribute("data-drawn", "true")
    expect(first.locator(".textLayer")).to_contain_text("statins")
    expect(first.locator(".textLayer mark.term.include")).to_have_text("randomised")
    expect(first.locator(".textLayer mark.term.exclude")).to_have_text("children")
    assert first.locator("canvas").evaluate(INKED) > 50
    expect(viewer.locator(".ft-page[data-page='2']")).to_have_attribute("data-drawn", "true")
    # The extracted text beside it, marked by the server as before.
    expect(page.locator("#ft-text mark.term.include")).to_have_text("randomised")
    page.screenshot(path=str(screenshot_dir / "screening-full-text-pdf-viewer.png"),
                    full_page=True)
    assert not errors, errors
