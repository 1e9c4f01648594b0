"""In chromium against gunicorn and a real worker: a batch has run; its owner opens the review
from the batch page, walks the queue with j / k, corrects two articles with the number keys and
Enter and a third with clicks in the list, sees the agreement move, then makes a dataset and
retrains in one click and follows the new model's training to its page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.core.files import File
from playwright.sync_api import expect

from classification import services
from classification.review.models import ReviewItem
from dataset_management.services import dataset_create_from_upload
from tests.batch_support import DEMO_SLICE, create_batch, wait_for_batch
from tests.job_support import fast_env, wait_for_job
from tests.plugins.browser import log_in
from tests.test_review_corrections_become_a_dataset_that_trains import articles_file

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.timeout(600)]


def shot(page, folder: Path, name: str) -> None:
    page.screenshot(path=str(folder / f"review-{name}.png"), full_page=True)


def correct_with_keys(page) -> str:
    """Change the shown article's labels with a number key, confirm with Enter; its row."""
    row = page.get_attribute("#review-item", "data-row")
    labels = page.locator('#review-labels input[name="labels"]')
    checked = [labels.nth(i).is_checked() for i in range(labels.count())]
    # Toggle label 1, unless it is the only one given: then add label 2 (never leave none).
    key = "2" if checked[0] and sum(checked) == 1 else "1"
    page.keyboard.press(key)
    assert page.is_checked(f"#label-{key}") != checked[int(key) - 1]
    page.keyboard.press("Enter")
    # The page moves on to the next least-certain article the server names.
    expect(page.locator("#review-item")).not_to_have_attribute("data-row", row)
    return row


def test_review_corrects_three_articles_and_retrains_in_one_click(
    app_server, start_worker, chromium_browser, transactional_db, user, screenshot_dir,
    tmp_path,
) -> None:
    start_worker(**fast_env())
    with DEMO_SLICE.open("rb") as handle:
        dataset = dataset_create_from_upload(owner=user, name="Slice",
                                             uploaded_file=File(handle, name=DEMO_SLICE.name))
    base_job = services.training_job_create(owner=user, dataset=dataset,
                                            model_type="tfidf_logreg", name="Base", config={})
    wait_for_job(base_job, {"completed", "failed"}, timeout=180)
    assert base_job.status == "completed", base_job.reason
    articles_file(tmp_path / "new-articles.csv", 30)
    batch = wait_for_batch(create_batch(owner=user, ml_model=base_job.ml_model,
                                        path=tmp_path / "new-articles.csv"))
    assert batch.status == "completed", batch.reason

    context = chromium_browser.new_context(viewport={"width": 1366, "height": 900})
    page = context.new_page()
    page.set_default_timeout(20_000)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    log_in(page, app_server.url, "alice", "alice-pass-123")

    # From the batch page to the review: the least certain article first.
    page.goto(f"{app_server.url}/classify/batches/{batch.pk.hex}/")
    page.click("#batch-review")
    page.wait_for_url(re.compile(r"/review/$"))
    assert page.inner_text("h1") == "Review: new-articles.csv"
    assert page.inner_text("#review-position").startswith("Article 1 of 30")
    first = page.get_attribute("#review-item", "data-row")
    top = ReviewItem.objects.filter(batch=batch).order_by("-uncertainty", "row").first()
    assert first == str(top.row)
    shot(page, screenshot_dir, "01-one-at-a-time")

    # j and k walk the queue.
    page.keyboard.press("j")
    expect(page.locator("#review-item")).not_to_have_attribute("data-row", first)
    assert page.inner_text("#review-position").startswith("Article 2 of 30")
    page.keyboard.press("k")
    expect(page.locator("#review-item")).to_have_attribute("data-row", first)

    # Two corrections with the keyboard only.
    rows = [correct_with_keys(page), correct_with_keys(page)]
    assert rows[0] == first
    expect(page.locator('#agreement-reviewed [data-agreement="reviewed"]')).to_have_text("2")

    # The third with clicks, in the dense list: the cursor starts on the first unreviewed row.
    page.click("#mode-list")
    current = page.locator(".review-row.current")
    expect(current).to_have_count(1)
    third = current.get_attribute("data-row")
    assert third not in rows
    current.locator(".review-chip:not(:has(input:checked))").first.click()
    current.locator("button:has-text('Confirm')").click()
    expect(page.locator(f"#row-{third}")).to_have_class(re.compile(r"\breviewed\b"))
    expect(page.locator(f"#row-{third} [data-field='state']")).to_have_text("corrected")
    expect(page.locator('#agreement-reviewed [data-agreement="reviewed"]')).to_have_text("3")
    expect(page.locator('[data-agreement="exact_share"]')).to_have_text("0%")
    shot(page, screenshot_dir, "02-list")

    reviewed = ReviewItem.objects.filter(batch=batch, reviewed_labels__isnull=False)
    assert sorted(str(i.row) for i in reviewed) == sorted([*rows, third])
    assert all(i.reviewer_id == user.pk and i.reviewed_at and not i.is_confirmed
               for i in reviewed)

    # One click: the dataset and the retraining; the job page follows it to the new model.
    page.click("#retrain-button")
    page.wait_for_url(re.compile(r"/jobs/\d+/$"))
    expect(page.locator("#job-status")).to_have_text(
        re.compile(r"^\s*(Completed|Failed)\s*$"), timeout=180_000)
    assert page.inner_text("#job-status").strip() == "Completed", page.inner_text("main")
    page.click("#model-link")
    assert page.inner_text("h1") == "Base + 3 reviewed"
    shot(page, screenshot_dir, "03-new-model")
    page.goto(f"{app_server.url}/classify/batches/{batch.pk.hex}/review/")
    expect(page.locator("#review-rounds")).to_contain_text("Base + 3 reviewed")
    expect(page.locator("#review-rounds .badge")).to_have_text("Completed")
    assert not errors, errors  # a CSP violation would show here
    context.close()
