"""The Classify page offers a choice between each label's F1-tuned threshold and its recall
threshold (with the model's recall target) only for a model that has recall thresholds. Chosen
for one article, recall gives the labels the engine's predict(threshold="recall") gives; chosen
in the batch form, the batch is stored with it and its page says so. A model saved before recall
thresholds has no choice drawn, and a forged recall is refused with a sentence."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from classification import ml_models
from classification.engine.types import article_text
from classification.models import BatchJob
from tests.batch_support import DEMO_SLICE, input_rows
from tests.threshold_support import format_2_model

pytestmark = pytest.mark.django_db

TITLE = "Statins and stroke after myocardial infarction"
ABSTRACT = "Seizures, arrhythmia and renal failure in older adults after coronary stenting."


@pytest.fixture
def old_model(user: Any, rows: Any, tfidf_artifact: dict[str, Any], tmp_path: Path) -> Any:
    return format_2_model(user=user, rows=rows, tfidf_artifact=tfidf_artifact,
                          folder=tmp_path / "old")


def page(client: Any, model: Any, **post: str) -> str:
    url = f"{reverse('classification:classify')}?model={model.pk}"
    if not post:
        return client.get(url).content.decode()
    return client.post(url, {"model": model.pk, "title": TITLE, "abstract": ABSTRACT,
                             **post}).content.decode()


def telling_article(engine: Any) -> tuple[dict[str, str], dict[str, Any], dict[str, Any]]:
    """The first demo article whose recall labels are more than its F1 labels, with both."""
    articles = input_rows(DEMO_SLICE)
    texts = [article_text(a["title"], a["abstract"]) for a in articles]
    pairs = zip(articles, engine.predict(texts, threshold="recall"),
                engine.predict(texts, threshold="f1"), strict=True)
    return next((a, r, f) for a, r, f in pairs if set(r["labels"]) > set(f["labels"]))


def shown_labels(html: str) -> list[str]:
    predicted = html.split("Predicted:", 1)[1].split("</p>", 1)[0]
    return [part.split("</span>", 1)[0] for part in predicted.split('class="badge ok">')[1:]]


def test_the_choice_is_drawn_with_the_recall_target_for_a_model_that_has_it(
        alice_client, trained_model) -> None:
    html = page(alice_client, trained_model)
    assert 'id="id_threshold_recall"' in html
    assert 'id="id_batch_threshold_recall"' in html
    assert "recall ≥ 0.95 on validation" in html


def test_recall_for_one_article_gives_the_engines_recall_labels(alice_client,
                                                                 trained_model) -> None:
    article, want_recall, want_f1 = telling_article(
        ml_models.load_classifier(trained_model.artifact_path))
    text = {"title": article["title"], "abstract": article["abstract"]}
    recall = page(alice_client, trained_model, threshold="recall", **text)
    assert sorted(shown_labels(recall)) == sorted(want_recall["labels"])
    assert "Every label reaching its recall threshold applies" in recall
    assert 'value="recall" id="id_threshold_recall" checked' in recall
    f1 = page(alice_client, trained_model, threshold="f1", **text)
    assert sorted(shown_labels(f1)) == sorted(want_f1["labels"])


def test_the_batch_form_stores_the_choice_and_the_batch_page_says_it(
        alice_client, media_root, trained_model) -> None:
    upload = SimpleUploadedFile("articles.csv", DEMO_SLICE.read_bytes(), content_type="text/csv")
    response = alice_client.post(reverse("classification:batch_create"), {
        "model": trained_model.pk, "file": upload, "threshold": "recall"}, follow=True)
    batch = BatchJob.objects.get()
    assert batch.threshold == "recall"
    html = response.content.decode()
    assert "Labels chosen by each label's recall threshold (recall ≥ 0.95 on validation)" in html
    # What was measured about its probabilities: the fixture's split was too small to choose on.
    assert "Not recalibrated: the validation split had" in html


def test_a_model_without_recall_thresholds_offers_no_choice_and_refuses_a_forged_one(
        alice_client, old_model) -> None:
    html = page(alice_client, old_model)
    assert 'name="threshold"' not in html
    refused = page(alice_client, old_model, threshold="recall")
    assert "has no recall thresholds" in refused
    assert "Predicted:" not in refused
    assert "Predicted:" in page(alice_client, old_model, threshold="f1")
