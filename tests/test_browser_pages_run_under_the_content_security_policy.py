"""Every page works under the Content-Security-Policy (no inline scripts or style attributes):
in a real browser against gunicorn, chromium reports no violation while the pages render, the
job page draws its Chart.js curves and progress bar, the model pages their charts and heatmap,
and /api/docs/ renders Swagger UI with its operations."""

from __future__ import annotations

import time
from typing import Any

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

CSP_WORDS = "Content Security Policy"


class Violations:
    """Console messages and page errors that mention the Content-Security-Policy."""

    def __init__(self, page: Any) -> None:
        self.seen: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda error: self._add(f"pageerror: {error}"))

    def _console(self, message: Any) -> None:
        self._add(f"{message.type}: {message.text}")

    def _add(self, text: str) -> None:
        if CSP_WORDS in text:
            self.seen.append(text)


def chart_points(page: Any, canvas_id: str) -> int:
    """How many data points Chart.js holds for the chart on this canvas (-1: no chart)."""
    return page.evaluate(
        """id => {
            const chart = window.Chart && Chart.getChart(document.getElementById(id));
            return chart ? chart.data.datasets.reduce((n, d) => n + d.data.length, 0) : -1;
        }""",
        canvas_id,
    )


def wait_for_chart(page: Any, canvas_id: str, timeout: float = 10.0) -> int:
    # Polled from here: page.wait_for_function compiles its predicate with eval, which this
    # very policy forbids.
    deadline = time.monotonic() + timeout
    while (points := chart_points(page, canvas_id)) < 0 and time.monotonic() < deadline:
        time.sleep(0.1)
    return points


@pytest.fixture
def server(start_app_server):
    # The test settings let WhiteNoise find static files without collectstatic.
    return start_app_server()


@pytest.fixture
def world(transactional_db: None, user, rows) -> dict[str, Any]:
    dataset = rows.dataset(user)
    first = rows.model(user, dataset)
    second = rows.model(user, dataset, name="TF-IDF SVM", model_type="tfidf_svm")
    job = rows.job(first)
    return {"dataset": dataset, "models": (first, second), "job": job}


def test_pages_render_with_no_csp_violation(server, chromium_browser, world) -> None:
    context = chromium_browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(20_000)
    violations = Violations(page)
    url = server.url

    # The real login form, so the policy is also checked on the anonymous pages.
    response = page.goto(f"{url}/accounts/login/")
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy
    assert "unsafe-inline" not in policy
    page.fill("#id_username", "alice")
    page.fill("#id_password", "alice-pass-123")
    page.click("button:has-text('Log in')")
    page.wait_for_url(f"{url}/")

    # The job page: both curves are drawn from the history, the bar shows the progress.
    job = world["job"]
    page.goto(f"{url}/jobs/{job.pk}/")
    assert wait_for_chart(page, "loss-chart") == 2
    assert chart_points(page, "f1-chart") == 1
    width = page.evaluate("() => document.querySelector('#job-progress .bar').style.width")
    assert width == "42%"

    first, second = world["models"]
    page.goto(f"{url}/models/{first.pk}/")
    assert wait_for_chart(page, "per-label-chart") == 2
    heat = page.evaluate("() => getComputedStyle(document.querySelector('td.cell'))"
                         ".backgroundColor")
    assert heat.startswith("rgba(31, 111, 139")

    page.goto(f"{url}/models/compare/?ids={first.pk}&ids={second.pk}")
    assert wait_for_chart(page, "headline-chart") >= 0

    page.goto(f"{url}/datasets/{world['dataset'].pk}/")
    assert wait_for_chart(page, "label-chart") >= 0
    # A destructive form asks first (the question used to be an inline onsubmit handler).
    asked: list[str] = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
    page.click("button:has-text('Delete dataset')")
    assert asked == ["Delete this dataset? This cannot be undone."]
    assert page.url == f"{url}/datasets/{world['dataset'].pk}/"  # dismissed: nothing deleted

    for path in ("/", "/datasets/", "/datasets/upload/", "/models/", "/models/new/",
                 "/classify/", "/projects/", f"/projects/{world['dataset'].project_id}/"):
        page.goto(f"{url}{path}")
        page.wait_for_load_state("load")
    # The header's project switcher opens, and an invitation link is shown (static/js/projects.js).
    page.click(".project-switcher summary")
    assert page.is_visible(".project-menu")
    page.check("#invitation-form input[name=anyone]")  # a link for anyone is an explicit choice
    page.click("#invitation-form button[type=submit]")
    assert "/invite/" in page.input_value("#invitation-link")
    page.wait_for_timeout(300)  # polling scripts run their first request

    # Swagger UI, vendored, renders the schema's operations.
    page.goto(f"{url}/api/docs/")
    page.wait_for_selector(".swagger-ui .opblock")
    assert page.locator(".swagger-ui .opblock").count() > 10
    assert "MedLitBot API" in page.inner_text(".swagger-ui .info .title")

    assert violations.seen == []

    # The listener does catch a violation: an injected inline script is refused and reported.
    page.evaluate("""() => {
        const s = document.createElement('script');
        s.textContent = 'window.injected = true';
        document.body.appendChild(s);
    }""")
    page.wait_for_timeout(200)
    assert page.evaluate("() => window.injected === undefined")
    assert any("inline script" in text for text in violations.seen), violations.seen
    context.close()


def test_the_admin_login_has_no_csp_violation(server, chromium_browser) -> None:
    context = chromium_browser.new_context()
    page = context.new_page()
    violations = Violations(page)
    page.goto(f"{server.url}/admin/login/")
    page.wait_for_selector("#id_username")
    page.wait_for_timeout(200)
    assert violations.seen == []
    context.close()
