"""Self-training works for a transformer too: the round's refit starts from the base weights
(not the first fit's last checkpoint), writes its checkpoints in a folder of its own so the
job's resume still reads the first fit's, and the round is judged on validation."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from classification import paths
from classification.jobs import lifecycle
from classification.jobs.training import run_training
from classification.models import MLModel
from tests.job_support import tiny_bert_config
from tests.self_training_support import unlabelled_dataset


def test_a_tiny_bert_self_trains_one_round_in_its_own_folder(
        transactional_db: None, slice_dataset: Any, user: Any,
        import_file: Callable[..., Any], tmp_path: Path, settings: Any,
        tiny_bert_dir: Path) -> None:
    settings.MODEL_ARTIFACT_ROOT = tmp_path / "artifacts"
    unlabelled = unlabelled_dataset(import_file, slice_dataset, tmp_path, train_rows=0,
                                    variants=60)
    job = lifecycle.training_job_create(
        owner=user, dataset=slice_dataset, model_type="custom", name="", staff=True,
        config=tiny_bert_config(tiny_bert_dir, epochs=3, self_training_rounds=1,
                                self_training_threshold=0.5,
                                self_training_datasets=[str(unlabelled.pk)]))
    assert lifecycle.training_job_claim(job=job)

    assert run_training(job_id=job.pk) == 0
    job.refresh_from_db()
    model = MLModel.objects.get(pk=job.ml_model_id)
    assert job.status == "completed", job.reason
    record = model.metrics["self_training"]
    assert [r["round"] for r in record["rounds"]] == [0, 1], job.log_tail
    assert record["rounds"][1]["rows_added"] > 0
    folder = paths.job_output_dir(job.pk)
    assert paths.checkpoint_dirs(folder / "self_training_round_1")
    first = paths.latest_checkpoint(folder)
    assert first is not None
    assert Path(first).parent == folder
