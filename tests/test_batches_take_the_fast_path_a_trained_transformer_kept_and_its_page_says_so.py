"""The whole path of the int8 fast path: a tiny BERT trained by a real worker records its batch
verdict; the model page states which path batches take and why; a batch run by a real inference
worker gives exactly the labels that path gives. The page's wording for each verdict is checked
on recorded metrics too."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

from classification import services
from classification.batches import storage
from classification.batches.packing import WINDOW, predict_packed
from classification.engine.types import article_text
from classification.ml_models import load_classifier
from classification.models import TrainingJob
from tests.batch_support import (
    DEMO_SLICE,
    create_batch,
    input_rows,
    start_inference_worker,
    wait_for_batch,
)
from tests.job_support import fast_env, tiny_bert_config, wait_for_job


def page(client, model) -> str:
    return client.get(reverse("classification:model_detail", args=[model.pk])).content.decode()


@pytest.mark.worker
def test_a_batch_gives_the_labels_of_the_path_the_model_page_names(
    start_worker, slice_dataset, tiny_bert_dir: Path, user, alice_client
) -> None:
    start_worker(queues=(settings.QUEUE_TRAINING,), **fast_env())
    start_inference_worker(start_worker)
    job = services.training_job_create(
        owner=user, dataset=slice_dataset, model_type="custom", name="Tiny fast",
        config=tiny_bert_config(tiny_bert_dir, epochs=2), staff=True,
    )
    job = wait_for_job(job, {"completed", "failed", "stalled", "cancelled"}, timeout=180)
    assert job.status == TrainingJob.Status.COMPLETED, (job.reason, job.log_tail)
    model = job.ml_model
    model.refresh_from_db()
    verdict = model.metrics["fast_inference"]
    assert verdict["built"] is True, verdict
    # Which int8 recipe is first depends on this CPU's timing (OpenVINO's won on an AVX2-only
    # EPYC, ONNX Runtime's on a Xeon with AMX); the batch must follow whichever it is.
    assert verdict["kind"] in ("openvino-int8", "onnx-int8")
    assert "thresholds" not in verdict  # the rules stay in the artifact

    html = page(alice_client, model)
    assert 'id="inference-path"' in html
    if verdict["used"]:
        assert "Batches run on the <strong>int8 fast path</strong>" in html
    else:
        assert "The int8 fast path was built but is not used" in html
    assert f"fast path {verdict['val_macro_f1']:.3f}" in html

    texts = [article_text(r["title"], r["abstract"]) for r in input_rows(DEMO_SLICE)]
    assert len(texts) <= WINDOW  # one window: the runner's calls are predict_packed's
    loaded = load_classifier(model.artifact_path)
    standard = predict_packed(texts, loaded.predict)
    if not verdict["used"]:
        items = batch_items(user, model)
        assert [i["predicted_labels"] for i in items] == [p["labels"] for p in standard]
        assert probabilities(items) == pytest.approx(probabilities(standard), abs=1e-4)

    # A tiny model is faster in torch than in ONNX Runtime, so here its verdict is usually "not
    # used". Mark it used, as a CPU where int8 wins would have: the worker reloads the changed
    # artifact, and the batch must now give the int8 graph's probabilities.
    manifest_path = Path(model.artifact_path) / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["fast_path"]["used"] = True
    manifest_path.write_text(json.dumps(manifest))
    later = time.time() + 5  # the worker's cache is keyed by the manifest's mtime
    os.utime(manifest_path, (later, later))
    marked = load_classifier(model.artifact_path)
    fast = predict_packed(texts, lambda some: marked.predict(some, fast=True))
    items = batch_items(user, model)
    assert [i["predicted_labels"] for i in items] == [p["labels"] for p in fast]
    assert probabilities(items) == pytest.approx(probabilities(fast), abs=1e-4)
    # int8 activations are quantized with each call's own range: hence the runner's calls.
    gap = max(abs(a - b) for a, b in zip(probabilities(fast), probabilities(standard),
                                          strict=True))
    assert gap > 3e-4, "the two paths must differ for this test to tell them apart"


def probabilities(predictions: list[dict]) -> list[float]:
    """Every article's probabilities, label by label, in one flat list."""
    return [p["probabilities"][name] for p in predictions for name in sorted(p["probabilities"])]


def batch_items(user, model) -> list[dict]:
    """A batch of the demo slice through the real inference worker: its stored records."""
    batch = wait_for_batch(create_batch(owner=user, ml_model=model, path=DEMO_SLICE), timeout=120)
    assert batch.status == "completed", batch.reason
    records = storage.absolute(batch.result_path).parent / storage.RECORDS_NAME
    return [json.loads(line) for line in records.read_text(encoding="utf-8").splitlines()]


@pytest.mark.django_db
@pytest.mark.parametrize(("fast_inference", "says"), [
    ({"kind": "onnx-int8", "built": True, "used": True, "tolerance": 0.005,
      "reason": "validation macro-F1 0.912 against 0.915 on the standard path: no more than "
                "0.005 lower", "val_macro_f1": 0.912, "standard_val_macro_f1": 0.915,
      "decision_agreement": 0.97, "max_prob_diff": 0.012, "speedup": 2.4},
     ["Batches run on the <strong>int8 fast path</strong>", "no more than 0.005 lower",
      "97% of validation articles", "2.4x the standard path"]),
    ({"kind": "onnx-int8", "built": True, "used": False, "tolerance": 0.005,
      "reason": "validation macro-F1 0.880 against 0.915 on the standard path: more than 0.005 "
                "lower, so batches use the standard path", "val_macro_f1": 0.88,
      "standard_val_macro_f1": 0.915, "decision_agreement": 0.9, "max_prob_diff": 0.08},
     ["Batches run on the <strong>standard path</strong>", "was built but is not used",
      "more than 0.005 lower"]),
    ({"kind": "onnx-int8", "built": False, "used": False,
      "reason": "the model runs on CUDA, where the standard path is the fast one"},
     ["The int8 fast path was not built: the model runs on CUDA"]),
    (None, ["was not built: this model was trained before MedLitBot had a fast path"]),
])
def test_the_model_page_names_the_batch_path_and_its_reason(
    alice_client, user, rows, fast_inference, says, tmp_path
) -> None:
    metrics = {"micro_f1": 0.9, "macro_f1": 0.9, "evaluated_on": "test"}
    if fast_inference:
        metrics["fast_inference"] = fast_inference
    model = rows.model(user, rows.dataset(user), model_type="minilm", metrics=metrics,
                       artifact_path=str(tmp_path))
    html = page(alice_client, model)
    for text in says:
        assert text in html


@pytest.mark.django_db
def test_a_tfidf_model_page_has_no_batch_path_section(
    alice_client, user, rows, tmp_path
) -> None:
    model = rows.model(user, rows.dataset(user), model_type="tfidf_logreg",
                       metrics={"micro_f1": 0.9, "macro_f1": 0.9}, artifact_path=str(tmp_path))
    assert 'id="inference-path"' not in page(alice_client, model)
