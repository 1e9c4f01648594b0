"""The model page says what the model reads beside the title and abstract, from the metrics its
training job stored: "Uses: journal, MeSH" or "text only". A model trained before metadata
features existed says neither."""

from __future__ import annotations

import pytest
from django.urls import reverse

from classification.engine.metadata import metadata_summary

pytestmark = pytest.mark.django_db

METRICS = {"micro_f1": 0.92, "macro_f1": 0.91, "evaluated_on": "test",
           "validation": {"macro_f1": 0.9, "micro_f1": 0.91}}


def page(client, model) -> str:
    return client.get(reverse("classification:model_detail", args=[model.pk])).content.decode()


def test_a_model_trained_with_journal_and_mesh_names_them(alice_client, user, rows):
    metrics = {**METRICS, "metadata": metadata_summary(["journal", "mesh"])}
    model = rows.model(user, rows.dataset(user), metrics=metrics)
    html = page(alice_client, model)
    assert "Uses: journal, MeSH, beside the title and abstract." in html
    assert "text only" not in html


def test_a_model_trained_on_text_alone_says_text_only(alice_client, user, rows):
    model = rows.model(user, rows.dataset(user), metrics={**METRICS,
                                                          "metadata": metadata_summary([])})
    assert "Uses: text only (title and abstract)." in page(alice_client, model)


def test_a_model_from_before_metadata_features_says_nothing_of_them(alice_client, user, rows):
    html = page(alice_client, rows.model(user, rows.dataset(user), metrics=METRICS))
    assert 'id="metadata-fields"' not in html
