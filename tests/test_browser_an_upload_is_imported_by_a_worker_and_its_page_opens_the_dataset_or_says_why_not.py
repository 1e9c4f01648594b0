"""In a real browser under the app's Content-Security-Policy: Create dataset leads to the import
page, which follows the worker's progress and opens the new dataset when it is done; a file the
worker refuses stays on the import page with the reason in plain words."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.import_support import start_default_worker
from tests.plugins.browser import log_in
from tests.plugins.datasets import DEMO_CSV

pytestmark = [pytest.mark.browser, pytest.mark.worker]


def create(page, base: str, path: Path, name: str) -> None:
    page.goto(f"{base}/datasets/upload/")
    page.set_input_files("#id_file", str(path))
    page.fill("#id_name", name)
    page.click("button:has-text('Upload and preview')")
    page.wait_for_selector("h1:text-is('Check your dataset')", timeout=60_000)
    page.click("button:has-text('Create dataset')")
    page.wait_for_url(re.compile(r"/datasets/imports/\d+/$"))


def test_the_import_page_opens_the_dataset_or_shows_why_the_worker_refused_the_file(
    app_server, start_worker, chromium_browser, user, tmp_path: Path
) -> None:
    start_default_worker(start_worker)
    context = chromium_browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(30_000)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    log_in(page, app_server.url, "alice", "alice-pass-123")

    create(page, app_server.url, DEMO_CSV, "Demo in a browser")
    assert page.inner_text("h1") == "Importing “Demo in a browser”"
    page.wait_for_url(re.compile(r"/datasets/\d+/$"), timeout=120_000)
    assert page.inner_text("h1") == "Demo in a browser"

    one_label = tmp_path / "one_label.csv"
    one_label.write_text("title,abstract,label\n" + "".join(
        f"Title {i},Heart study {i},cardiology\n" for i in range(30)))
    create(page, app_server.url, one_label, "One label")
    expect(page.locator("#import-badge")).to_have_text("Failed", timeout=120_000)
    assert page.inner_text("#import-reason").startswith("Only one label ('cardiology') found")
    assert page.is_visible("#import-again")
    assert page.is_hidden("#import-cancel")
    assert not [e for e in errors if "Content Security Policy" in e], errors
    context.close()
