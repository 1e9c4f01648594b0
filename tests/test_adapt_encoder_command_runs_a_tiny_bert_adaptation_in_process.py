"""`manage.py adapt_encoder --in-process` creates an adapt job through the service and runs it
in the command's own process: the tiny BERT's held-out perplexity drops and its encoder is
saved; bad input is refused in one line with nothing saved."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from classification.models import MLModel, TrainingJob


def test_the_command_adapts_the_tiny_bert_in_process(
        transactional_db: None, slice_dataset: Any, tiny_bert_dir: Path, user: Any) -> None:
    out = io.StringIO()
    call_command("adapt_encoder", "--dataset", str(slice_dataset.pk), "--base", "custom",
                 "--model-path", str(tiny_bert_dir), "--epochs", "2", "--batch-size", "8",
                 "--learning-rate", "3e-3", "--max-length", "64", "--name", "Tiny adapted",
                 "--owner", user.username, "--in-process", stdout=out)
    model = MLModel.objects.get(name="Tiny adapted")
    job = TrainingJob.objects.get(ml_model=model)
    assert job.status == "completed", (job.reason, job.log_tail)
    assert model.model_type == "adapt"
    assert job.config["adapt_training_only"] is True
    metrics = model.metrics
    assert metrics["perplexity_after"] < metrics["perplexity_before"], metrics
    assert metrics["encoder_shape"] == [2, 32, 64]  # the tiny BERT's layers, widths
    assert Path(model.artifact_path, "config.json").is_file()
    assert f"Running adapt job {job.pk} here" in out.getvalue()
    assert "held-out perplexity" in out.getvalue()


@pytest.mark.django_db
def test_the_command_refuses_bad_input_and_saves_nothing(slice_dataset: Any) -> None:
    before = (MLModel.objects.count(), TrainingJob.objects.count())
    cases = [
        (["--dataset", "999"], "No dataset 999"),
        (["--dataset", str(slice_dataset.pk), "--batch", "not-a-uuid"], "No batch not-a-uuid"),
        (["--dataset", str(slice_dataset.pk), "--base", "tfidf_svm"], "transformer encoder"),
        (["--dataset", str(slice_dataset.pk), "--mlm-probability", "0.9"], "--mlm-probability"),
    ]
    for argv, message in cases:
        with pytest.raises(CommandError, match=message):
            call_command("adapt_encoder", *argv, "--in-process", stdout=io.StringIO())
    assert (MLModel.objects.count(), TrainingJob.objects.count()) == before
