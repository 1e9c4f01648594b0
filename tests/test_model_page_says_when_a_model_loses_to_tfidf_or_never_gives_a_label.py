"""The model page says plainly when a trained model scores below the TF-IDF baseline trained on
the same rows, or almost never gives one of its labels; a model that does neither gets no
warning. The yardstick itself is a real tfidf_logreg fitted on the job's own splits."""

from __future__ import annotations

import pytest
from django.urls import reverse

from classification.jobs.baseline_check import validation_baseline
from classification.ml_models import TrainConfig

pytestmark = pytest.mark.django_db

PER_LABEL = {
    "cardiovascular": {"precision": 0.9, "recall": 0.92, "f1": 0.91, "support": 40},
    "neurological": {"precision": 0.5, "recall": 0.02, "f1": 0.04, "support": 50},
}


def metrics(**changes):
    return {"micro_f1": 0.55, "macro_f1": 0.47, "evaluated_on": "test", "per_label": PER_LABEL,
            "validation": {"macro_f1": 0.48, "micro_f1": 0.56},
            "baseline": {"model_type": "tfidf_logreg", "macro_f1": 0.61, "micro_f1": 0.62,
                         "fit_seconds": 1.2}, **changes}


def page(client, model) -> str:
    return client.get(reverse("classification:model_detail", args=[model.pk])).content.decode()


def test_a_model_below_the_baseline_and_blind_to_a_label_is_flagged(alice_client, user, rows):
    model = rows.model(user, rows.dataset(user), model_type="minilm", metrics=metrics())
    html = page(alice_client, model)
    assert "Worse than the TF-IDF baseline" in html
    assert "macro-F1 is 0.480, while tfidf_logreg trained on the same rows" in html
    assert "Almost never predicts “neurological”: it found 2% of the 50 test articles" in html
    assert "cardiovascular”" not in html.split("quality-warning")[-1].split("</div>")[0]


def test_a_model_that_beats_the_baseline_and_gives_every_label_has_no_warning(
        alice_client, user, rows):
    good = {**PER_LABEL, "neurological": {**PER_LABEL["neurological"], "recall": 0.9}}
    model = rows.model(user, rows.dataset(user), model_type="minilm",
                       metrics=metrics(per_label=good, validation={"macro_f1": 0.70}))
    html = page(alice_client, model)
    assert "quality-warning" not in html
    assert "Yardstick: tfidf_logreg trained on the same rows" in html


def test_the_yardstick_is_a_tfidf_model_fitted_on_the_same_rows(demo_split) -> None:
    train, val, _ = demo_split
    labels = sorted({label for row in train.labels for label in row})
    config = TrainConfig(label_names=labels, multi_label=True)
    found = validation_baseline(model_type="minilm", train=train, val=val, config=config)
    assert found is not None
    assert found["model_type"] == "tfidf_logreg"
    assert 0.3 < found["macro_f1"] <= 1.0
    # A baseline is not measured against itself.
    assert validation_baseline(model_type="tfidf_svm", train=train, val=val,
                               config=config) is None
