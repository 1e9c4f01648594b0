"""The New model page offers each adapted encoder as its own choice ("adapted:<id>"). Its
estimate used to find no figures under that value (its script fell back to a rate of 1 and no
overhead); now each choice has the adapted type's figures, measured on MiniLM-L6, scaled by the
encoder's size as its adapt job recorded it, and an encoder adapted before sizes were recorded
keeps the figures as they are. Someone else's encoder is not offered, nor estimated. A finished
fine-tuning teaches the page its speed at the reference size, whatever its encoder's size."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone

from classification.engine.model_size import BERT_BASE, OVERHEAD_FLOOR
from classification.estimates import device_plan_summary
from classification.models import TrainingJob

pytestmark = pytest.mark.django_db


def estimator(html: str) -> dict[str, Any]:
    found = re.search(r'<script id="estimator-data" type="application/json">(.*?)</script>',
                      html, re.S)
    assert found, "the page carries its estimator data"
    return json.loads(found.group(1))


def test_each_adapted_encoder_is_estimated_at_its_own_size(
        alice_client: Any, user: Any, other_user: Any, rows: Any) -> None:
    dataset = rows.dataset(user)
    base = rows.model(user, dataset, name="BERT-base adapted", model_type="adapt",
                      metrics={"encoder_shape": list(BERT_BASE)})
    tiny = rows.model(user, dataset, name="Tiny adapted", model_type="adapt",
                      metrics={"encoder_shape": [2, 32, 64]})
    older = rows.model(user, dataset, name="Adapted before sizes", model_type="adapt",
                       metrics={"perplexity_after": 9.0})
    foreign = rows.model(other_user, rows.dataset(other_user), name="Bob's encoder",
                         model_type="adapt", metrics={"encoder_shape": list(BERT_BASE)})

    html = alice_client.get(reverse("classification:model_new")).content.decode()
    data = estimator(html)
    rates, overhead = data["rates"], data["overhead"]
    for encoder in (base, tiny, older):
        assert f'value="adapted:{encoder.pk}"' in html  # the value the script looks up
    assert f"adapted:{foreign.pk}" not in html
    assert f"adapted:{foreign.pk}" not in rates

    assert rates[f"adapted:{base.pk}"] == pytest.approx(rates["adapted"] / 8)
    assert overhead[f"adapted:{base.pk}"] == overhead["adapted"]
    tiny_ratio = 2 * (4 * 32 * 32 + 2 * 32 * 64) / (6 * (4 * 384 * 384 + 2 * 384 * 1536))
    assert rates[f"adapted:{tiny.pk}"] == pytest.approx(rates["adapted"] / tiny_ratio)
    assert overhead[f"adapted:{tiny.pk}"] == pytest.approx(OVERHEAD_FLOOR * overhead["adapted"])
    assert rates[f"adapted:{older.pk}"] == rates["adapted"]
    assert overhead[f"adapted:{older.pk}"] == overhead["adapted"]


def test_a_finished_fine_tuning_teaches_the_rate_of_the_encoder_size_the_figure_is_for(
        alice_client: Any, user: Any, rows: Any) -> None:
    """A BERT-base encoder's job that ran at MiniLM-equivalent 10 samples/s/thread is learned
    as 10 for the adapted type (not 10 / 8), and the same encoder is then estimated at 10 / 8."""
    dataset = rows.dataset(user, split_sizes={"train": 1000, "validation": 100, "test": 100})
    base = rows.model(user, dataset, name="BERT-base adapted", model_type="adapt",
                      metrics={"encoder_shape": list(BERT_BASE)})
    tuned = rows.model(user, dataset, name="Fine-tuned", model_type="adapted")
    threads = max(1, int(device_plan_summary().get("threads") or 1))
    work = 1000 + (100 + 100) / 3  # one epoch, rows at 256 tokens, validation and test scored
    took = 25.0 + 8 * work / (threads ** 0.8 * 10.0)
    finished = timezone.now()
    rows.job(tuned, status=TrainingJob.Status.COMPLETED, current_epoch=1,
             started_at=finished - timedelta(seconds=took), finished_at=finished,
             config={"encoder_model_id": base.pk, "epochs": 1, "max_length": 256})

    rates = estimator(alice_client.get(reverse("classification:model_new")).content.decode())[
        "rates"]
    assert rates["adapted"] == pytest.approx(10.0, rel=1e-3)
    assert rates[f"adapted:{base.pk}"] == pytest.approx(10.0 / 8, rel=1e-3)
