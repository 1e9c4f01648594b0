"""A GPU job may train with a larger batch and learning rate than it asked for (gpu_batch.py);
the model page names what it really used, so two models' settings can be compared. A model
trained with the batch it asked for says nothing of the kind."""

from __future__ import annotations

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db

METRICS = {"micro_f1": 0.92, "macro_f1": 0.91, "evaluated_on": "test",
           "validation": {"macro_f1": 0.9, "micro_f1": 0.91}}


def page(client, model) -> str:
    return client.get(reverse("classification:model_detail", args=[model.pk])).content.decode()


def test_a_model_that_filled_the_gpu_names_its_batch_and_learning_rate(alice_client, user, rows):
    filled = {**METRICS, "validation": {**METRICS["validation"], "train_batch_size": 32,
                                        "train_learning_rate": 0.0002}}
    model = rows.model(user, rows.dataset(user), model_type="minilm", metrics=filled,
                       device_used="cuda")
    html = page(alice_client, model)
    assert "trained on cuda at batch 32 and learning rate 2.0e-04, chosen to fill the GPU" in html


def test_a_model_trained_at_its_own_batch_says_nothing_of_the_gpu(alice_client, user, rows):
    model = rows.model(user, rows.dataset(user), model_type="minilm", metrics=METRICS,
                       device_used="cpu")
    html = page(alice_client, model)
    assert "trained on cpu." in html
    assert "fill the GPU" not in html
