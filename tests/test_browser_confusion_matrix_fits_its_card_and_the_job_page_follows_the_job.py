"""In chromium against gunicorn: a model's confusion matrix fits its card on a laptop and on a
phone (a wide one scrolls in its own box, never cut off), and the job page drops its live fields
(heartbeat age, time left, phase, "updates every …") the moment the job ends, stops its clocks,
and shows a note instead of an empty loss axis."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from classification.models import TrainingJob
from tests.plugins.browser import log_in

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

SIX = ["cardiovascular", "neurological", "oncology", "infectious_disease", "endocrinology",
       "respiratory"]
PHONE = {"width": 375, "height": 812}
LAPTOP = {"width": 1366, "height": 900}

# Where the matrix, its scroll box and its card lie, and how wide the page is.
GEOMETRY = """() => {
    const rect = el => { const r = el.getBoundingClientRect();
                         return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
    const table = document.querySelector('#confusion table.confusion');
    const wrap = table.closest('.confusion-wrap');
    const cells = [...table.querySelectorAll('td.cell, th.col-label, th.row-label')];
    return {
        table: rect(table), wrap: rect(wrap), card: rect(document.getElementById('confusion')),
        cells: cells.map(rect), count: table.querySelectorAll('td.cell').length,
        wrapScroll: wrap.scrollWidth, wrapClient: wrap.clientWidth,
        viewport: window.innerWidth, pageWidth: document.documentElement.scrollWidth,
    };
}"""


def single_label_model(rows, user, labels: list[str], name: str) -> Any:
    n = len(labels)
    matrix = [[120 if i == j else (i * 7 + j * 3) % 11 for j in range(n)] for i in range(n)]
    metrics = {
        "n": sum(map(sum, matrix)), "multi_label": False, "micro_f1": 0.84, "macro_f1": 0.8,
        "accuracy": 0.84,
        "per_label": {label: {"precision": 0.8, "recall": 0.8, "f1": 0.8, "support": 130}
                      for label in labels},
        "confusion": {"labels": labels, "matrix": matrix},
    }
    dataset = rows.dataset(user, name=f"{name} set", label_names=labels, is_multilabel=False,
                           label_counts={label: 130 for label in labels})
    return rows.model(user, dataset, name=name, model_type="minilm", metrics=metrics,
                      label_names=labels, is_multilabel=False)


@pytest.fixture
def logged_in(app_server, chromium_browser, transactional_db, user) -> Iterator[Any]:
    """Open a page of the given size, logged in as alice through the real login form."""
    contexts = []

    def open_page(viewport: dict[str, int]) -> Any:
        context = chromium_browser.new_context(viewport=viewport)
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(20_000)
        log_in(page, app_server.url, "alice", "alice-pass-123")
        return page

    yield open_page
    for context in contexts:
        context.close()


def inside(inner: dict[str, float], outer: dict[str, float], slack: float = 0.5) -> bool:
    return (inner["left"] >= outer["left"] - slack and inner["right"] <= outer["right"] + slack
            and inner["top"] >= outer["top"] - slack and inner["bottom"] <= outer["bottom"] + slack)


@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["1366px", "375px"])
def test_the_confusion_matrix_of_a_six_label_model_is_fully_visible_in_its_card(
    app_server, logged_in, rows, user, screenshot_dir: Path, viewport: dict[str, int]
) -> None:
    model = single_label_model(rows, user, SIX, "Six domains")
    page = logged_in(viewport)

    page.goto(f"{app_server.url}/models/{model.pk}/")
    page.locator("#confusion").scroll_into_view_if_needed()
    geometry = page.evaluate(GEOMETRY)
    page.locator("#confusion").screenshot(
        path=str(screenshot_dir / f"confusion-6-labels-{viewport['width']}px.png"))

    assert geometry["count"] == 36
    assert inside(geometry["table"], geometry["card"]), geometry
    assert geometry["table"]["left"] >= 0
    assert geometry["table"]["right"] <= geometry["viewport"]
    assert geometry["wrapScroll"] <= geometry["wrapClient"]  # nothing hidden behind a scroll
    assert all(inside(cell, geometry["card"]) for cell in geometry["cells"])
    assert geometry["pageWidth"] <= geometry["viewport"]  # the page itself never scrolls sideways
    # The last column and row are there to read, not clipped.
    last = page.locator("#confusion tbody tr").last.locator("td.cell").last
    expect(last).to_be_visible()
    assert last.inner_text() == "120"


@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["1366px", "375px"])
def test_a_thirty_label_matrix_fits_or_scrolls_within_its_card_and_every_column_is_reachable(
    app_server, logged_in, rows, user, screenshot_dir: Path, viewport: dict[str, int]
) -> None:
    labels = [f"domain_{i:02d}_{word}" for i, word in enumerate(
        ["cardio", "neuro", "onco", "infect", "endo", "resp", "renal", "derm", "gastro",
         "haem", "immuno", "ortho", "ophth", "ent", "psych", "paed", "geri", "obst", "uro",
         "rheum", "toxic", "genet", "radio", "surg", "anaes", "emerg", "pall", "nutr", "sport",
         "public"])]
    model = single_label_model(rows, user, labels, "Thirty domains")
    page = logged_in(viewport)

    page.goto(f"{app_server.url}/models/{model.pk}/")
    page.locator("#confusion").scroll_into_view_if_needed()
    geometry = page.evaluate(GEOMETRY)
    page.locator("#confusion").screenshot(
        path=str(screenshot_dir / f"confusion-30-labels-{viewport['width']}px.png"))

    assert geometry["count"] == 900
    assert inside(geometry["wrap"], geometry["card"]), geometry
    assert geometry["pageWidth"] <= geometry["viewport"]
    if viewport["width"] == LAPTOP["width"]:  # a laptop shows all thirty columns at once
        assert inside(geometry["table"], geometry["card"]), geometry
    # Scrolled to its end, the box shows the last column inside the card.
    page.evaluate("() => { const w = document.querySelector('#confusion .confusion-wrap');"
                  " w.scrollLeft = w.scrollWidth; }")
    last = page.evaluate(GEOMETRY)["cells"][-1]
    assert inside(last, geometry["card"]), (last, geometry["card"])


def test_the_job_page_drops_its_live_fields_and_stops_its_clocks_when_the_job_ends(
    app_server, logged_in, rows, user, screenshot_dir: Path
) -> None:
    model = rows.model(user, rows.dataset(user), name="MiniLM live", model_type="minilm",
                       status="training")
    job = rows.job(model, metrics_history=[], last_loss=None, heartbeat_at=timezone.now(),
                   started_at=timezone.now(), config={"epochs": 3, "batch_size": 16})
    page = logged_in(LAPTOP)

    page.goto(f"{app_server.url}/jobs/{job.pk}/")
    card = page.locator("#job-card")
    expect(page.locator("#job-heartbeat")).to_be_visible()
    expect(page.locator("#job-heartbeat")).to_contain_text("s ago")
    expect(page.locator("#job-live-note")).to_be_visible()
    # No loss yet: a note, not an empty axis.
    expect(page.locator("#loss-empty")).to_be_visible()
    expect(page.locator("#loss-empty")).to_contain_text("No loss recorded yet")
    assert page.evaluate("() => getComputedStyle(document.getElementById('loss-chart'))"
                         ".visibility") == "hidden"
    page.screenshot(path=str(screenshot_dir / "job-page-while-the-job-runs.png"), full_page=True)
    ran_before = page.locator("#job-duration-ran").inner_text()
    page.wait_for_timeout(2_200)
    assert page.locator("#job-duration-ran").inner_text() != ran_before  # counting while it runs

    TrainingJob.objects.filter(pk=job.pk).update(
        status="completed", phase="done", progress_percentage=100.0, finished_at=timezone.now(),
        eta_seconds=0.0, updated_at=timezone.now(),
    )

    expect(page.locator("#job-status")).to_have_text("Completed", timeout=10_000)
    for selector in ("#job-heartbeat", "#job-eta", "#job-phase", "#job-live-note"):
        expect(page.locator(selector)).to_be_hidden()
    text = card.inner_text()
    assert "s ago" not in text
    assert "updates every" not in text.lower()
    assert "Last heartbeat" not in text
    expect(page.locator("#loss-empty")).to_contain_text("No loss was recorded")
    ran_after = page.locator("#job-duration-ran").inner_text()
    total_after = page.locator("#job-duration-total").inner_text()
    time.sleep(2.2)
    assert page.locator("#job-duration-ran").inner_text() == ran_after  # the clocks stopped
    assert page.locator("#job-duration-total").inner_text() == total_after
    card.screenshot(path=str(screenshot_dir / "job-page-after-the-job-ended.png"))


def test_a_finished_tfidf_job_on_a_phone_shows_no_epochs_and_says_why_it_has_no_loss_curve(
    app_server, logged_in, rows, user, screenshot_dir: Path
) -> None:
    model = rows.model(user, rows.dataset(user), name="TF-IDF phone")
    now = timezone.now()
    job = rows.job(model, status="completed", phase="done", progress_percentage=100.0,
                   current_epoch=1.0, total_epochs=1, current_step=1, total_steps=1,
                   last_loss=None, eta_seconds=0.0, started_at=now, finished_at=now,
                   metrics_history=[{"kind": "eval", "step": 1, "micro_f1": 0.88}],
                   config={"epochs": 3, "batch_size": 16, "max_length": 256},
                   log_tail="Featurising 16 texts\nfitted in 0.4 s")
    page = logged_in(PHONE)

    page.goto(f"{app_server.url}/jobs/{job.pk}/")
    expect(page.locator("#loss-empty")).to_contain_text("fitted in one pass")
    page.wait_for_timeout(300)  # the first poll has answered
    page.screenshot(path=str(screenshot_dir / "job-page-tfidf-375px.png"), full_page=True)

    text = page.locator("main").inner_text().lower()
    for word in ("epoch", "batch", "learning", "max_length", "heartbeat", "updates every"):
        assert word not in text, word
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]


# How far the log box is scrolled, and whether its newest line is in view.
LOG_SCROLL = """() => { const log = document.getElementById('job-log');
    return {top: log.scrollTop, client: log.clientHeight, height: log.scrollHeight}; }"""


def test_the_job_log_opens_at_its_newest_line_and_follows_new_lines_unless_scrolled_up(
    app_server, logged_in, rows, user
) -> None:
    lines = [f"step {i}: loss 0.{i:03d}" for i in range(120)]
    model = rows.model(user, rows.dataset(user), name="MiniLM log", model_type="minilm",
                       status="training")
    job = rows.job(model, heartbeat_at=timezone.now(), started_at=timezone.now(),
                   log_tail="\n".join([*lines, "no heartbeat for 600 s: marked stalled"]))
    page = logged_in(LAPTOP)

    page.goto(f"{app_server.url}/jobs/{job.pk}/")
    page.wait_for_timeout(300)  # the first poll has answered
    box = page.evaluate(LOG_SCROLL)
    assert box["height"] > box["client"]  # the log is longer than its box...
    assert box["top"] + box["client"] >= box["height"] - 4, box  # ...and opens at its end
    assert page.evaluate("() => { const log = document.getElementById('job-log');"
                         " const r = document.createRange(); r.selectNodeContents(log);"
                         " const rects = r.getClientRects(); const last = rects[rects.length - 1];"
                         " const box = log.getBoundingClientRect();"
                         " return last.bottom <= box.bottom + 1 && last.top >= box.top; }")

    # New lines arrive: the box follows them.
    TrainingJob.objects.filter(pk=job.pk).update(
        log_tail="\n".join([*lines, *(f"step {i}" for i in range(120, 160))]))
    page.wait_for_function("() => document.getElementById('job-log').textContent"
                           ".includes('step 159')", timeout=10_000)
    box = page.evaluate(LOG_SCROLL)
    assert box["top"] + box["client"] >= box["height"] - 4, box

    # The reader scrolls up: new lines no longer move the box.
    page.evaluate("() => { document.getElementById('job-log').scrollTop = 0; }")
    TrainingJob.objects.filter(pk=job.pk).update(
        log_tail="\n".join([*lines, *(f"step {i}" for i in range(120, 170))]))
    page.wait_for_function("() => document.getElementById('job-log').textContent"
                           ".includes('step 169')", timeout=10_000)
    assert page.evaluate(LOG_SCROLL)["top"] == 0
