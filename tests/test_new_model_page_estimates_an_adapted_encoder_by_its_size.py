"""The New model page offers each adapted encoder as its own choice ("adapted:<id>"). Its
estimate used to find no figures under that value (its script fell back to a rate of 1 and no
overhead); now each choice has the adapted type's figures, measured on MiniLM-L6, scaled by the
encoder's size as its adapt job recorded it, and an encoder adapted before sizes were recorded
keeps the figures as they are. Someone else's encoder is not offered, nor estimated."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.urls import reverse

from classification.engine.model_size import BERT_BASE, OVERHEAD_FLOOR

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
