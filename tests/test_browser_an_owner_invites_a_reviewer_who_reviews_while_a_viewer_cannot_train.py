"""In chromium against gunicorn: three people work in one project.

The owner makes two invitation links on the project page; a reviewer signs up through one, finds
the project's batch and reviews an article with the keyboard; a viewer joins through the other,
sees no Train button anywhere, and a forged training POST is refused with the role it needs.
The project's activity log then shows what each of the three did.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from classification.models import MLModel
from classification.review.models import ReviewItem
from projects import services as project_services
from tests.batch_support import completed_batch
from tests.plugins.browser import log_in

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def _invite(page: Any, url: str, project_id: int, role: str) -> str:
    page.goto(f"{url}/projects/{project_id}/")
    page.select_option("#invitation-form select[name=role]", role)
    page.check("#invitation-form input[name=anyone]")  # a link for anyone, not one e-mail
    page.click("#invitation-form button[type=submit]")
    return page.input_value("#invitation-link")


def _sign_up(browser: Any, link: str, username: str) -> Any:
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.set_default_timeout(20_000)
    page.goto(link)
    page.fill("#id_username", username)
    page.fill("#id_email", f"{username}@example.org")
    page.fill("#id_password1", "a-long-pass-phrase-42")
    page.fill("#id_password2", "a-long-pass-phrase-42")
    page.click("#signup-form button[type=submit]")
    page.wait_for_url(re.compile(r"/projects/\d+/$"))
    return page


def test_an_owner_invites_a_reviewer_and_a_viewer_and_the_log_shows_all_three(
    app_server: Any, chromium_browser: Any, transactional_db: None, user: Any, rows: Any,
    tfidf_artifact: dict[str, Any], screenshot_dir: Path,
) -> None:
    project = project_services.project_create(user=user, name="Cardiology review")
    labels = tfidf_artifact["labels"]
    dataset = rows.dataset(user, project=project, label_names=labels)
    model = rows.model(user, dataset, project=project, artifact_path=tfidf_artifact["path"],
                       label_names=labels, metrics=tfidf_artifact["metrics"])
    batch = completed_batch(user, model, [
        (1, "Heart failure with preserved ejection fraction", labels[0], *[0.55] * len(labels)),
        (2, "Stroke thrombolysis", labels[-1], *[0.6] * len(labels)),
    ], labels)
    url = app_server.url

    owner = chromium_browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    owner.set_default_timeout(20_000)
    log_in(owner, url, "alice", "alice-pass-123")
    reviewer_link = _invite(owner, url, project.pk, "reviewer")
    viewer_link = _invite(owner, url, project.pk, "viewer")

    # The reviewer signs up through the link, lands in the project and reviews its batch.
    rita = _sign_up(chromium_browser, reviewer_link, "rita")
    expect(rita.locator(".project-switcher summary")).to_contain_text("Cardiology review")
    rita.goto(f"{url}/classify/")
    rita.click(f"a[href$='/classify/batches/{batch.pk.hex}/']")
    rita.click("#batch-review")
    rita.wait_for_url(re.compile(r"/review/$"))
    row = rita.get_attribute("#review-item", "data-row")
    rita.keyboard.press("2")  # add the second label (toggling the only one off is refused)
    rita.keyboard.press("Enter")
    expect(rita.locator("#review-item")).not_to_have_attribute("data-row", row)
    reviewed = ReviewItem.objects.get(batch=batch, row=int(row))
    assert reviewed.reviewer.username == "rita"
    assert reviewed.reviewed_labels is not None
    rita.screenshot(path=str(screenshot_dir / "projects-reviewer.png"), full_page=True)

    # The viewer sees the project's work but no way to train, and a forged POST is refused.
    victor = _sign_up(chromium_browser, viewer_link, "victor")
    for page_url in ("/", "/models/", f"/datasets/{dataset.pk}/"):
        victor.goto(f"{url}{page_url}")
        expect(victor.locator("main")).to_contain_text(dataset.name if "datasets" in page_url
                                                       else "")
        assert victor.locator("a[href*='/models/new/']").count() == 0, page_url
    csrf = next(c["value"] for c in victor.context.cookies() if c["name"] == "csrftoken")
    forged = victor.request.post(f"{url}/models/new/", form={
        "dataset": str(dataset.pk), "model_type": "tfidf_svm", "preset": "quick",
        "csrfmiddlewaretoken": csrf}, headers={"Referer": f"{url}/models/"})
    assert forged.status == 403
    assert "needs the maintainer role" in forged.text()
    assert MLModel.objects.filter(project=project).count() == 1

    # The owner's log names all three, each with what they did.
    owner.goto(f"{url}/projects/{project.pk}/")
    log = owner.inner_text("#activity")
    assert "alice made an invitation link for a reviewer" in log
    assert "rita joined as reviewer" in log
    assert "victor joined as viewer" in log
    assert re.search(r"rita\s.*review", log), log
    owner.screenshot(path=str(screenshot_dir / "projects-activity.png"), full_page=True)
