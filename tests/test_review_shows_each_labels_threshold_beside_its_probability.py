"""The review shows, for a multi-label model, each label's own decision threshold beside its
probability (one article and the list), so "no" at 50% beside "yes" at 42% reads as it should:
neurological needs 55%, cardiovascular 40% (MULTI_METRICS' thresholds)."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from classification.models import BatchJob
from tests.batch_support import completed_batch

pytestmark = pytest.mark.django_db

LABELS = ["cardiovascular", "neurological"]
# row, title, predicted labels, p(cardiovascular), p(neurological)
ROWS = [(1, "Syncope workup", ["cardiovascular"], 0.42, 0.50)]


@pytest.fixture
def batch(media_root, user, rows) -> BatchJob:
    return completed_batch(user, rows.model(user), ROWS, LABELS)


def page(client, batch: BatchJob, **query: str) -> str:
    url = reverse("classification:review:page", args=[batch.pk.hex])
    query_string = "&".join(f"{k}={v}" for k, v in query.items())
    return client.get(url + ("?" + query_string if query_string else "")).content.decode()


def text_of(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def test_one_article_names_each_labels_threshold_and_the_models_answer(
    batch, alice_client
) -> None:
    html = page(alice_client, batch)

    text = text_of(html[html.index('id="review-labels"'):html.index("</fieldset>")])
    assert "cardiovascular 42% model: yes · needs 40%" in text
    assert "neurological 50% model: no · needs 55%" in text
    assert "that label's own threshold" in text


def test_the_list_names_each_labels_threshold_beside_its_probability(batch, alice_client) -> None:
    text = text_of(page(alice_client, batch, mode="list", show="all"))

    assert "cardiovascular 42% · needs 40%" in text
    assert "neurological 50% · needs 55%" in text


def test_a_single_label_model_shows_no_threshold(media_root, user, rows, alice_client) -> None:
    model = rows.model(user, is_multilabel=False, metrics={"n": 2, "micro_f1": 0.5})
    single = completed_batch(user, model, [(1, "Syncope", ["cardiovascular"], 0.7, 0.3)], LABELS)

    text = text_of(page(alice_client, single))

    assert "needs" not in text
    assert "cardiovascular 70% model: yes" in text
