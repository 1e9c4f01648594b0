"""A TF-IDF job with two self-training rounds: each round adds confident pseudo-labelled rows,
says so in the job's log with its validation micro- and macro-F1, and the model kept is the
round with the best validation macro-F1 (round 0, the plain fit, included), whose validation
scores are the model's."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from classification.jobs import lifecycle
from classification.jobs.training import run_training
from classification.models import MLModel
from classification.views.presenters import job_settings
from tests.self_training_support import unlabelled_dataset


@pytest.mark.django_db(transaction=True)
def test_two_rounds_add_rows_log_their_scores_and_keep_the_best(
        slice_dataset: Any, user: Any, import_file: Callable[..., Any], tmp_path: Path,
        settings: Any) -> None:
    settings.MODEL_ARTIFACT_ROOT = tmp_path / "artifacts"
    unlabelled = unlabelled_dataset(import_file, slice_dataset, tmp_path, train_rows=0)
    job = lifecycle.training_job_create(
        owner=user, dataset=slice_dataset, model_type="tfidf_logreg", name="", config={
            "self_training_rounds": 2, "self_training_threshold": 0.6,
            "self_training_datasets": [str(unlabelled.pk)]})
    assert lifecycle.training_job_claim(job=job)

    assert run_training(job_id=job.pk) == 0
    job.refresh_from_db()
    model = MLModel.objects.get(pk=job.ml_model_id)
    assert job.status == "completed", job.reason

    record = model.metrics["self_training"]
    rounds = record["rounds"]
    assert [r["round"] for r in rounds][:2] == [0, 1]
    assert rounds[0]["rows_added"] == 0
    assert all(r["rows_added"] > 0 for r in rounds[1:])
    for r in rounds:
        assert 0.0 <= r["validation_macro_f1"] <= 1.0
        assert 0.0 <= r["validation_micro_f1"] <= 1.0
    best = max(rounds, key=lambda r: r["validation_macro_f1"])
    assert record["kept_round"] == min(r["round"] for r in rounds
                                       if r["validation_macro_f1"] == best["validation_macro_f1"])
    assert model.metrics["validation"]["macro_f1"] == pytest.approx(best["validation_macro_f1"])
    assert record["unlabelled"]["texts"] > 0
    for r in rounds[1:]:
        assert (f"self-training round {r['round']}: {r['rows_added']} pseudo-labelled rows "
                f"added; validation micro-F1 {r['validation_micro_f1']:.3f}, macro-F1 "
                f"{r['validation_macro_f1']:.3f}") in job.log_tail
    assert f"self-training: round {record['kept_round']} kept" in job.log_tail
    shown = dict(job_settings(model_type="tfidf_logreg", config=job.config))
    assert shown["self_training_rounds"] == 2
    assert shown["self_training_datasets"] == [str(unlabelled.pk)]
