"""An adapted encoder is a choice on the New model page: its own card, named, with what
adaptation did to its perplexity and an estimate at its own size (a BERT-base encoder takes far
longer than a tiny one). Picked and started in a real browser, it queues a fine-tuning of that
encoder. Before, the form accepted such a choice but the page drew no card for it."""

from __future__ import annotations

import re
from typing import Any

import pytest

from classification.engine.model_size import BERT_BASE
from classification.models import TrainingJob
from tests.plugins.browser import log_in

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def seconds(text: str) -> float:
    """MLB.fmtSeconds read back: "~6 s", "~78 min", "~1.3 h"."""
    found = re.fullmatch(r"~([\d.]+) (s|min|h)", text.strip())
    assert found, text
    return float(found.group(1)) * {"s": 1, "min": 60, "h": 3600}[found.group(2)]


@pytest.fixture
def world(transactional_db: None, user: Any, rows: Any) -> dict[str, Any]:
    dataset = rows.dataset(user, split_sizes={"train": 1600, "validation": 200, "test": 200})
    base = rows.model(user, dataset, name="Cardiology BERT-base", model_type="adapt",
                      metrics={"encoder_shape": list(BERT_BASE), "perplexity_before": 21.4,
                               "perplexity_after": 12.9})
    tiny = rows.model(user, dataset, name="Cardiology tiny", model_type="adapt",
                      metrics={"encoder_shape": [2, 32, 64]})
    return {"dataset": dataset, "base": base, "tiny": tiny}


def test_an_adapted_encoder_is_picked_with_its_own_estimate_and_starts_a_fine_tuning(
        start_app_server: Any, chromium_browser: Any, world: dict[str, Any]) -> None:
    server = start_app_server()
    page = chromium_browser.new_context().new_page()
    page.set_default_timeout(20_000)
    log_in(page, server.url, "alice", "alice-pass-123")

    page.goto(f"{server.url}/models/new/?dataset={world['dataset'].pk}")
    base, tiny = world["base"], world["tiny"]
    base_card = page.locator("label.radio-card", has_text="Adapted encoder: Cardiology BERT-base")
    assert "Held-out perplexity 21.4 → 12.9." in base_card.inner_text()
    base_card.click()
    base_total = page.inner_text("#estimate-total")
    assert base_total.endswith("(estimate)")
    assert base_total.startswith(page.inner_text(f'[data-estimate="adapted:{base.pk}"]'))
    page.locator("label.radio-card", has_text="Adapted encoder: Cardiology tiny").click()
    tiny_total = page.inner_text("#estimate-total").removesuffix(" (estimate)")
    # Eight times MiniLM's work per token against a 2-layer, 32-wide model's.
    assert seconds(base_total.removesuffix(" (estimate)")) > 100 * seconds(tiny_total)

    page.fill("#id_name", "Cardiology tiny, fine-tuned")
    page.click("button:has-text('Start training')")
    page.wait_for_url(re.compile(r"/jobs/\d+/$"))
    job = TrainingJob.objects.get(ml_model__name="Cardiology tiny, fine-tuned")
    assert job.ml_model.model_type == "adapted"
    assert job.config["encoder_model_id"] == tiny.pk
