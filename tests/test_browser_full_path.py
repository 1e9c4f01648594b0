"""A person's whole path in a real browser, against a live server and a real Celery worker:
log in, upload the demo slice, train TF-IDF and a tiny BERT, watch them finish, classify."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.timeout(900)]

FIXTURES = Path(__file__).resolve().parent / "fixtures"
DEMO = FIXTURES / "demo_slice.csv"
if not DEMO.exists():
    DEMO = Path(__file__).resolve().parents[1] / "demo_data" / "medlit_challenge.csv"


def shot(page, folder: Path, name: str) -> None:
    page.screenshot(path=str(folder / f"{name}.png"), full_page=True)


def train(page, app_server, folder: Path, *, model_type: str, name: str, timeout_s: float,
          model_path: str = "") -> None:
    page.goto(f"{app_server.url}/models/new/")
    page.fill("#id_name", name)
    page.check(f'input[name="model_type"][value="{model_type}"]')
    page.check('input[name="preset"][value="quick"]')
    if model_path:
        page.fill("#id_model_path", model_path)
        page.click("summary:has-text('Advanced parameters')")
        page.fill("#id_epochs", "2")
        page.fill("#id_batch_size", "16")
    assert "estimate" in page.inner_text("#estimate-total")
    if model_type == "tfidf_logreg":
        shot(page, folder, "04-new-model")
    page.click("button:has-text('Start training')")
    page.wait_for_url(re.compile(r"/jobs/\d+/$"))
    assert page.inner_text("h1") == f"Training: {name}"
    # The page polls the progress endpoint; wait for what a person waits for. (An expect, not
    # wait_for_function: that evals its predicate, which the Content-Security-Policy forbids.)
    expect(page.locator("#job-status")).to_have_text(
        re.compile(r"^\s*(Completed|Failed)\s*$"), timeout=timeout_s * 1000
    )
    status = page.inner_text("#job-status").strip()
    if status != "Completed":
        shot(page, folder, f"failed-{model_type}")
        pytest.fail(f"{name} ended {status}: {page.inner_text('#job-reason')}\n"
                    f"{page.inner_text('#job-log')}")
    assert page.inner_text("#job-percent").strip() == "100%"
    assert page.is_hidden("#cancel-form")


def test_upload_train_watch_and_classify(app_server, start_worker, chromium_browser,
                                         screenshot_dir, tiny_bert_dir) -> None:
    # Staff: the custom type trains from a folder on the server, which only staff may name.
    get_user_model().objects.create_user("demo", "demo@example.org", "demo-pass-123",
                                         is_staff=True)
    start_worker()
    context = chromium_browser.new_context(viewport={"width": 1366, "height": 900})
    page = context.new_page()
    page.set_default_timeout(30_000)

    # Log in
    page.goto(f"{app_server.url}/")
    assert "/accounts/login/" in page.url
    shot(page, screenshot_dir, "01-login")
    page.fill("#id_username", "demo")
    page.fill("#id_password", "demo-pass-123")
    page.click("button:has-text('Log in')")
    page.wait_for_url(f"{app_server.url}/")
    assert page.inner_text("h1") == "Dashboard"

    # Upload the demo slice: preview with the detected columns, then create
    page.goto(f"{app_server.url}/datasets/upload/")
    page.set_input_files("#id_file", str(DEMO))
    page.fill("#id_name", "Demo slice")
    page.click("button:has-text('Upload and preview')")
    # The form is sent by XMLHttpRequest (its progress bar): the preview replaces the page after.
    page.wait_for_selector("h1:text-is('Check your dataset')", timeout=60_000)
    assert page.inner_text("h1") == "Check your dataset"
    assert page.input_value("#map_label") == "group"
    assert "multi-label" in page.inner_text("#validation-report")
    shot(page, screenshot_dir, "02-upload-preview")
    page.click("button:has-text('Create dataset')")
    # The worker reads the file; its import page follows it, then opens the dataset.
    page.wait_for_url(re.compile(r"/datasets/imports/\d+/$"))
    page.wait_for_url(re.compile(r"/datasets/\d+/$"), timeout=120_000)
    assert "Demo slice" in page.inner_text("h1")
    page.wait_for_selector("#label-chart")
    page.wait_for_timeout(500)  # let Chart.js draw before the screenshot
    shot(page, screenshot_dir, "03-dataset-detail")
    dataset_url = page.url

    # Train the baseline and the tiny BERT, watching each to 100%
    train(page, app_server, screenshot_dir, model_type="tfidf_logreg", name="TF-IDF baseline",
          timeout_s=180)
    page.wait_for_timeout(600)  # the bar's width transition (0.4 s) must end first
    assert page.is_visible("#loss-empty")  # a one-pass baseline says why it has no loss curve
    shot(page, screenshot_dir, "05-job-tfidf-done")
    tfidf_job_url = page.url
    train(page, app_server, screenshot_dir, model_type="custom", name="Tiny BERT",
          timeout_s=480, model_path=str(tiny_bert_dir))
    page.wait_for_timeout(500)
    shot(page, screenshot_dir, "06-job-tinybert-done")

    # The model page, then classify a text with it
    page.click("#model-link")
    assert page.inner_text("h1") == "Tiny BERT"
    assert "micro-f1" in page.inner_text("main").lower()  # labels are shown upper-case
    assert page.locator("#per-label tbody tr").count() >= 2
    page.wait_for_timeout(500)
    shot(page, screenshot_dir, "07-model-detail")

    page.click("a:has-text('Classify with it')")
    page.fill("#id_title", "Acute myocardial infarction after coronary stenting")
    page.fill("#id_abstract", "We followed 300 patients with heart failure and arrhythmia.")
    page.click("button:has-text('Classify')")
    page.wait_for_selector("#result .prob")
    bars = page.locator("#result .prob")
    assert bars.count() == 4
    assert "Predicted:" in page.inner_text("#result")
    shot(page, screenshot_dir, "08-classify")

    # A file of articles becomes a background batch with progress and a safe CSV download
    page.set_input_files("#id_batch_file", str(DEMO))
    page.click("button:has-text('Classify file')")
    page.wait_for_url(re.compile(r"/classify/batches/[0-9a-f]{32}/$"))
    page.wait_for_selector("#batch-download", state="visible", timeout=120_000)
    assert page.inner_text("#batch-badge").strip() == "Completed"
    assert "200 of 200 articles" in page.inner_text("#batch-status")
    page.wait_for_timeout(600)
    shot(page, screenshot_dir, "08b-batch-done")
    with page.expect_download() as download_info:
        page.click("#batch-download")
    lines = Path(download_info.value.path()).read_text(encoding="utf-8-sig").splitlines()
    assert lines[0].startswith("row,title,abstract,predicted_labels,p_")
    assert len(lines) >= 201

    # Compare both models, and the dashboard
    page.goto(f"{app_server.url}/models/")
    for box in page.locator('input[name="ids"]').all():
        box.check()
    page.click("button:has-text('Compare selected')")
    # An expect, not a count: the click returns before the compare page has loaded.
    expect(page.locator("#compare-table thead th")).to_have_count(3)
    page.wait_for_timeout(500)
    shot(page, screenshot_dir, "09-compare")
    compare_url = page.url
    page.goto(f"{app_server.url}/")
    shot(page, screenshot_dir, "10-dashboard")
    # The interactive API docs render from the vendored Swagger UI, with no network
    page.goto(f"{app_server.url}/api/docs/")
    page.wait_for_selector(".swagger-ui .info .title")
    assert "MedLitBot API" in page.inner_text(".swagger-ui .info .title")
    assert page.locator(".opblock").count() >= 10
    shot(page, screenshot_dir, "10b-api-docs")

    # On a phone the navigation collapses behind a Menu button
    phone = chromium_browser.new_context(viewport={"width": 390, "height": 844},
                                         storage_state=context.storage_state())
    mobile = phone.new_page()
    mobile.goto(f"{app_server.url}/")
    assert mobile.is_visible("label.nav-toggle-label")
    assert mobile.is_hidden("nav.nav")
    shot(mobile, screenshot_dir, "11-phone-dashboard")
    mobile.click("label.nav-toggle-label")
    assert mobile.is_visible("nav.nav a:has-text('Datasets')")
    shot(mobile, screenshot_dir, "12-phone-menu")
    # Every page fits a phone's width: wide tables scroll inside their card, not the page.
    for name, url in (("13-phone-job", tfidf_job_url), ("14-phone-dataset", dataset_url),
                      ("15-phone-new-model", "/models/new/"), ("16-phone-classify", "/classify/"),
                      ("17-phone-compare", compare_url)):
        mobile.goto(url if url.startswith("http") else f"{app_server.url}{url}")
        mobile.wait_for_timeout(600)
        overflow = mobile.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"{name} is {overflow}px wider than the phone"
        shot(mobile, screenshot_dir, name)
    phone.close()
    context.close()
