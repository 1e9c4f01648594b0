"""In chromium against gunicorn, one review from the first key to the PRISMA diagram (issue 50).

Rita and Remy screen five cited records blind, each in a browser of their own, by key: both
include two, both exclude one, both say unsure on the aspirin cohort (so it goes to full text)
and they disagree on the last, which Mona resolves on the conflicts page by key. Mona stops
the session (full text opens to the reviewers), bulk-uploads three PDFs, matched by DOI, PMID
and title, and the viewer draws the aspirin report on a canvas; both reviewers include it and
the statins cohort at full text. Mona then excludes the aspirin record's title/abstract label
from its full-text page: refused on the same card (409), the record staying included, until
she confirms with a reason. She defines a tag that Rita puts on two records, and the records
page's filters narrow the list, its count saying so. Last, every number in the PRISMA page's
SVG diagram equals the table's.
"""

from __future__ import annotations

import csv
import io
import re
import time
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from playwright.sync_api import expect

from dataset_management.services import dataset_create_from_upload
from screening import services
from screening.models import Decision, Record, RecordState, Resolution
from tests.pdf_support import pdf_bytes
from tests.screening_desk_support import browser_page
from tests.screening_support import team_make

pytestmark = [pytest.mark.browser, pytest.mark.timeout(420)]

STATINS = "Statins for the primary prevention of cardiovascular events in adults"
EXERCISE = "Exercise training after myocardial infarction: a randomised trial"
ASPIRIN = "Aspirin and colorectal cancer incidence in a large cohort study"
DIET = "Mediterranean diet and the risk of type 2 diabetes in older women"
VITAMIN = "Vitamin D supplementation and fracture risk: a pooled analysis"
# title, pmid, doi, Rita's key, Remy's key
ARTICLES = [(STATINS, "31234567", "10.1000/statins.2020.01", "y", "y"),
            (EXERCISE, "32345678", "", "y", "y"),
            (ASPIRIN, "", "", "u", "u"),
            (DIET, "", "", "n", "n"),
            (VITAMIN, "35678901", "10.1000/vitamin-d", "y", "n")]
# Each table row's key, and the words its box starts with in the diagram.
BOXES = {"identified": "Records identified", "duplicates_removed": "Duplicate records removed",
         "screened": "Records screened", "not_yet_screened": "Not yet screened",
         "excluded_at_screening": "Records excluded",
         "reports_sought": "Reports sought for retrieval",
         "reports_not_retrieved": "Reports not retrieved",
         "reports_assessed": "Reports assessed for eligibility",
         "reports_awaiting_assessment": "Awaiting assessment",
         "reports_excluded": "Reports excluded", "studies_included": "Studies included in review",
         "reports_of_included_studies": "Reports of included studies"}
INKED = """canvas => {
    const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
    let inked = 0;
    for (let i = 0; i < data.length; i += 4) if (data[i] < 200 && data[i + 3] > 0) inked += 1;
    return inked;
}"""
DRAWN = """svg => Array.from(svg.querySelectorAll("text"))
    .map(t => t.textContent.split(/\\s+/).join(" ").trim()).join(" ")"""


def _session(owner: Any) -> Any:
    team = team_make(owner)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["title", "abstract", "label", "pmid", "doi", "authors", "year", "journal"])
    for i, (title, pmid, doi, *_) in enumerate(ARTICLES):
        writer.writerow([title, f"Abstract of: {title}.", "oncological" if i % 2 else
                         "cardiovascular", pmid, doi, "Smith J, Doe AB", "2020", "BMJ"])
    dataset = dataset_create_from_upload(
        owner=owner, project=team.project, name="Cited articles",
        uploaded_file=SimpleUploadedFile("articles.csv", out.getvalue().encode()))
    # ranker_every above the collection's size: no refresh is sent (no worker runs here).
    session = services.session_create(user=team.maintainer, dataset=dataset, name="Whole",
                                      labels=["oncological"], reviewers_per_record=2,
                                      ranker_every=100)
    return team, session


def _screen(page: Any, reviewer: Any, column: int) -> None:
    """Answer every record by key, as ARTICLES says for this reviewer, whatever their order."""
    keys = {row[0]: row[column] for row in ARTICLES}
    for done in range(1, len(ARTICLES) + 1):
        title = page.locator("#record-title")
        expect(title).not_to_have_text("")
        shown = title.inner_text()
        page.keyboard.press(keys[shown])
        if done < len(ARTICLES):
            expect(title).not_to_have_text(shown)
    deadline = time.monotonic() + 20
    while Decision.objects.filter(reviewer=reviewer).count() < len(ARTICLES):
        assert time.monotonic() < deadline, f"{reviewer} has not every decision saved"
        time.sleep(0.1)


def _fulltext_include(page: Any, url: str, session: Any, record: Record) -> None:
    page.goto(f"{url}/screening/{session.pk}/fulltext/{record.pk}/")
    page.check("#ft-decide input[name='value-oncological'][value='yes']")
    page.click("#ft-decide-button")
    expect(page.locator(".alert")).to_contain_text("Your full-text decision is saved")


def _reports(folder: Path) -> list[str]:
    """Three reports: named by a DOI, named by a PMID, and one known by its title alone."""
    files = {"10.1000_statins.2020.01.pdf": [f"{STATINS}. Methods: a cohort."],
             "32345678.pdf": [f"{EXERCISE}. Methods: a randomised trial."],
             "scan-0042.pdf": [ASPIRIN, "Results: fewer adenomas with aspirin."]}
    for name, pages in files.items():
        (folder / name).write_bytes(pdf_bytes(pages))
    return [str(folder / name) for name in files]


def _prisma_agrees(page: Any) -> dict[str, int]:
    """Every number the diagram draws equals the table's row for its box; the table."""
    table = {cell.get_attribute("data-key"): int(cell.inner_text())
             for cell in page.locator("#prisma-table td[data-key]").all()
             if cell.inner_text().strip().isdigit()}
    drawn = page.locator("#prisma-diagram svg").evaluate(DRAWN)
    for key, words in BOXES.items():
        found = re.search(re.escape(words) + r" \(n = (\d+)\)", drawn)
        if found is None:  # drawn only when not 0
            assert table.get(key, 0) == 0, (key, drawn)
            continue
        assert int(found.group(1)) == table[key], (key, drawn)
    return table


def test_a_whole_review_in_the_browser(
    app_server: Any, chromium_browser: Any, transactional_db: None, user: Any,
    media_root: Path, screenshot_dir: Path, tmp_path: Path,
) -> None:
    team, session = _session(user)
    record = {r.title: r for r in Record.objects.filter(session=session)}
    url, errors = app_server.url, []

    rita = browser_page(chromium_browser, url, "rita", errors)
    remy = browser_page(chromium_browser, url, "remy", errors)
    for page, person, column in ((rita, team.reviewer, 3), (remy, team.reviewer2, 4)):
        page.goto(f"{url}/screening/{session.pk}/screen/")
        _screen(page, person, column)
    aspirin = Record.objects.get(pk=record[ASPIRIN].pk)
    assert aspirin.state == RecordState.SOUGHT  # unsure from both: at full text

    mona = browser_page(chromium_browser, url, "mona", errors)
    mona.on("dialog", lambda dialog: dialog.accept())
    mona.goto(f"{url}/screening/{session.pk}/")
    expect(mona.locator("#conflict-count")).to_have_text("1")
    mona.click("#resolve-one-by-one")
    expect(mona.locator("#conflict")).to_have_attribute("data-record",
                                                        str(record[VITAMIN].pk))
    mona.keyboard.press("n")
    expect(mona.locator("#no-conflicts")).to_be_visible()
    mona.goto(f"{url}/screening/{session.pk}/")
    mona.check("input[name=force]")
    mona.click("#stop")
    expect(mona.locator("#stop-justification")).to_be_visible()

    # Bulk upload: each PDF matched its record, by DOI, PMID and title.
    mona.click("#fulltext-link")
    mona.click("#fulltext-bulk-link")
    mona.set_input_files("#ft-bulk input[type=file]", _reports(tmp_path))
    mona.click("#ft-bulk button")
    for title, how in ((STATINS, "doi"), (EXERCISE, "pmid"), (ASPIRIN, "title")):
        row = mona.locator(f"#ft-bulk-results tr[data-record='{record[title].pk}']")
        expect(row.locator(".outcome")).to_have_text("attached")
        expect(row.locator(".how")).to_have_text(how)

    # The viewer draws the aspirin report; both reviewers include it at full text.
    rita.goto(f"{url}/screening/{session.pk}/fulltext/")
    rita.click(f"#fulltext-table tr[data-record='{record[ASPIRIN].pk}'] a")
    viewer = rita.locator("#ft-viewer")
    expect(viewer).to_have_attribute("data-state", "ready")
    first = viewer.locator(".ft-page[data-page='1']")
    expect(first).to_have_attribute("data-drawn", "true")
    expect(first.locator(".textLayer")).to_contain_text("Aspirin")
    assert first.locator("canvas").evaluate(INKED) > 50
    rita.screenshot(path=str(screenshot_dir / "whole-review-pdf-viewer.png"), full_page=True)
    for page in (rita, remy):
        for title in (ASPIRIN, STATINS):
            _fulltext_include(page, url, session, record[title])
    assert Record.objects.get(pk=record[ASPIRIN].pk).state == RecordState.INCLUDED

    # Excluding it at title/abstract now is asked first; only a confirmation with a reason
    # takes it out of full text.
    mona.goto(f"{url}/screening/{session.pk}/fulltext/{record[ASPIRIN].pk}/")
    mona.click(".ft-ta-resolve[data-label='oncological']")
    expect(mona.locator("#resolve-discard")).to_contain_text("This record has full-text work")
    mona.fill("#resolve-note", "adults only")
    mona.locator("#resolve-note").blur()
    mona.keyboard.press("n")
    expect(mona.locator("#resolve-refusal")).to_contain_text("full-text work")
    expect(mona.locator("#resolve-note")).to_have_value("adults only")
    assert Record.objects.get(pk=record[ASPIRIN].pk).state == RecordState.INCLUDED
    assert not Resolution.objects.filter(record=record[ASPIRIN]).exists()
    mona.screenshot(path=str(screenshot_dir / "whole-review-confirm-leaving-full-text.png"),
                    full_page=True)
    mona.check("#resolve-confirm")
    mona.fill("#resolve-discard-reason", "Protocol amended: adults only")
    mona.click("#resolve-no")
    expect(mona.locator("#no-conflicts")).to_be_visible()
    aspirin = Record.objects.get(pk=record[ASPIRIN].pk)
    assert aspirin.state == RecordState.EXCLUDED
    assert Resolution.objects.get(record=aspirin).discard_reason == (
        "Protocol amended: adults only")

    # Tags and filters narrow the records page, its count saying so.
    mona.goto(f"{url}/screening/{session.pk}/")
    mona.click("#records-link")
    expect(mona.locator("#records-count")).to_have_text("5 records")
    mona.fill("#tag-define input[name=name]", "needs-stats")
    mona.click("#tag-define button")
    rita.goto(f"{url}/screening/{session.pk}/records/")
    for title in (STATINS, DIET):
        row = rita.locator(f"#records-table tr[data-record='{record[title].pk}']")
        row.locator(".tag-form button").click()
        expect(rita.locator(f"#records-table tr[data-record='{record[title].pk}'] .tags")
               ).to_contain_text("needs-stats")
    mona.reload()
    mona.select_option("#records-filter select[name=tag]", "needs-stats")
    mona.click("#records-filter button")
    expect(mona.locator("#records-count")).to_have_text("2 records")
    mona.select_option("#records-filter select[name=stage]", "included")
    mona.click("#records-filter button")
    expect(mona.locator("#records-count")).to_have_text("1 record")
    expect(mona.locator("#records-table tbody tr .title")).to_have_text(STATINS)
    mona.screenshot(path=str(screenshot_dir / "whole-review-records-filtered.png"),
                    full_page=True)

    # PRISMA: the diagram and the table give the same numbers.
    mona.goto(f"{url}/screening/{session.pk}/")
    mona.click("#prisma-link")
    expect(mona.locator("#prisma-diagram svg")).to_be_visible()
    table = _prisma_agrees(mona)
    assert table["screened"] == 5
    assert table["excluded_at_screening"] == 3  # the diet, vitamin D and aspirin records
    assert table["reports_sought"] == 2
    assert table["reports_assessed"] == 1
    assert table["studies_included"] == 1  # the statins cohort
    mona.screenshot(path=str(screenshot_dir / "whole-review-prisma.png"), full_page=True)
    # The refused resolution's page was a 409: chromium logs it; nothing else went wrong.
    assert all("status of 409" in e for e in errors), errors
