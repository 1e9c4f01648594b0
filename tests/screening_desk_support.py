"""Set-up for the review desk's tests (issue 35): a team with a dataset of N records, and a
logged-in chromium page that collects its script errors."""

from __future__ import annotations

import csv
import io
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile

from dataset_management.services import dataset_create_from_upload
from tests.plugins.browser import log_in
from tests.screening_support import Team, team_make

PASSWORD = "pw-123456"  # tests.screening_support gives the team this password
TOPICS = ["Statins after infarction", "Stroke rehabilitation", "Tumour markers in serum",
          "Renal clearance of lithium", "Migraine prophylaxis", "Hepatic steatosis in children"]


def team_with_records(owner: Any, count: int, titles: list[str] | None = None) -> Team:
    """The screening team, its dataset replaced by one of `count` distinct records (`titles`,
    when given, name the first ones)."""
    team = team_make(owner)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["title", "abstract", "label"])
    for i in range(count):
        topic = TOPICS[i % len(TOPICS)]
        title = titles[i] if titles and i < len(titles) else f"{topic}: cohort {i + 1}"
        writer.writerow([title, f"Outcomes of cohort {i + 1} on {topic}.",
                         "oncological" if i % 3 == 0 else "cardiovascular"])
    upload = SimpleUploadedFile("records.csv", out.getvalue().encode())
    team.dataset = dataset_create_from_upload(owner=owner, project=team.project,
                                              name=f"{count} records", uploaded_file=upload)
    return team


def browser_page(browser: Any, url: str, username: str, errors: list[str],
                 **context: Any) -> Any:
    """A logged-in page in a context of its own (`context`: playwright's options, such as
    timezone_id or locale); script errors (CSP refusals too) go to `errors`."""
    page = browser.new_context(viewport={"width": 1280, "height": 900}, **context).new_page()
    page.set_default_timeout(20_000)
    page.on("console", lambda m: m.type == "error" and errors.append(f"{username}: {m.text}"))
    page.on("pageerror", lambda e: errors.append(f"{username}: {e}"))
    log_in(page, url, username, PASSWORD)
    return page
