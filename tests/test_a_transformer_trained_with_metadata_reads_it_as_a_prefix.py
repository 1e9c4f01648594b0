"""A transformer's training job (the tiny BERT through the real process body) reads the
dataset's journal and MeSH as a short prefix before the text, records that in its manifest and
metrics, and classifies an article that has none of them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from classification import ml_models, services
from classification.jobs import lifecycle
from classification.jobs.training import run_training
from classification.models import MLModel, TrainingJob
from classification.selectors import mlmodel_artifact_dir
from tests.job_support import tiny_bert_config
from tests.metadata_support import journal_corpus, journal_csv


def test_the_tiny_bert_reads_journal_and_mesh_as_a_prefix(
        transactional_db: None, import_file: Callable[..., Any], user: Any, settings: Any,
        tmp_path: Path, tiny_bert_dir: Path) -> None:
    settings.MODEL_ARTIFACT_ROOT = tmp_path / "artifacts"
    dataset = import_file(journal_csv(tmp_path / "journals.csv", journal_corpus(80, seed=4)))
    model = MLModel.objects.create(owner=user, name="Prefix", model_type="custom",
                                   dataset=dataset)
    job = TrainingJob.objects.create(ml_model=model, total_epochs=1,
                                     config=tiny_bert_config(tiny_bert_dir, epochs=1))
    assert lifecycle.training_job_claim(job=job)

    assert run_training(job_id=job.pk) == 0
    job.refresh_from_db()
    model.refresh_from_db()
    assert job.status == "completed", job.reason
    assert "metadata: journal, MeSH as prefix" in job.log_tail
    assert model.metrics["metadata"]["fields"] == ["journal", "mesh"]
    clf = ml_models.load_classifier(str(mlmodel_artifact_dir(ml_model=model)))
    assert clf.config.metadata_style == "prefix"
    texts = services.mlmodel_texts(ml_model=model, texts=["Palan mirtov.\n\nDexqua rolan."],
                                   metadata=[{"journal": ["Neurology Weekly"]}])
    assert texts == ["Journal: Neurology Weekly.\nPalan mirtov.\n\nDexqua rolan."]
    for given in (texts, ["Palan mirtov.\n\nDexqua rolan."]):
        [prediction] = services.mlmodel_predict(ml_model=model, texts=given)
        assert len(prediction["labels"]) == 1
