"""A screening team's labels often live in RIS keywords (KW): a model that read keywords as a
metadata feature would read its answer. Training leaves out the field the dataset's labels come
from, says so in the job's log, and uses the other fields the rows have."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from classification.jobs import lifecycle
from classification.jobs.training import run_training
from classification.models import MLModel, TrainingJob
from tests.metadata_support import journal_corpus


def screened_ris(path: Path, rows: list[dict[str, Any]]) -> Path:
    with path.open("w", encoding="utf-8") as out:
        for row in rows:
            decision = "include" if row["label"] == "cardiology" else "exclude"
            out.write(f"TY  - JOUR\nTI  - {row['title']}\nAB  - {row['abstract']}\n"
                      f"JO  - {row['journal']}\nKW  - {decision}\nER  - \n\n")
    return path


def test_keywords_holding_the_labels_are_left_out_and_the_journal_is_used(
        transactional_db: None, import_file: Callable[..., Any], user: Any, settings: Any,
        tmp_path: Path) -> None:
    settings.MODEL_ARTIFACT_ROOT = tmp_path / "artifacts"
    dataset = import_file(screened_ris(tmp_path / "screened.ris", journal_corpus(120, seed=3)))
    assert dataset.label_field == "keywords"
    model = MLModel.objects.create(owner=user, name="Screened", model_type="tfidf_logreg",
                                   dataset=dataset)
    job = TrainingJob.objects.create(ml_model=model, config={"metadata_fields": ["auto"]},
                                     total_epochs=1)
    assert lifecycle.training_job_claim(job=job)

    assert run_training(job_id=job.pk) == 0
    job.refresh_from_db()
    model.refresh_from_db()
    assert job.status == "completed", job.reason
    assert model.metrics["metadata"]["fields"] == ["journal"]
    assert "keywords left out: the labels come from it" in job.log_tail
