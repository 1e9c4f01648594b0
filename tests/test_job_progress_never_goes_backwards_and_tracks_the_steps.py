"""Through a three-epoch training with an evaluation after every epoch, the job's percentage never
goes backwards and follows the steps; the evaluations between epochs leave the bar where it is;
the final evaluation and the save have their own share after the last step; only the completed
job is at 100%."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from classification.jobs import lifecycle
from classification.jobs.progress import ProgressWriter, training_percent
from classification.jobs.training import run_training
from classification.models import MLModel, TrainingJob
from tests.job_support import tiny_bert_config

EPOCHS = 3


def test_progress_never_goes_backwards_and_tracks_the_steps_across_epochs_and_evaluations(
    transactional_db: None, slice_dataset: Any, user: Any, tiny_bert_dir: Path, settings: Any,
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings.MODEL_ARTIFACT_ROOT = tmp_path / "artifacts"
    settings.PROGRESS_WRITE_INTERVAL = 0  # no throttle: every progress event is a write
    config = tiny_bert_config(tiny_bert_dir, epochs=EPOCHS)
    model = MLModel.objects.create(
        owner=user, name="Bar", model_type="custom", dataset=slice_dataset, parameters=config
    )
    job = TrainingJob.objects.create(ml_model=model, config=config, total_epochs=EPOCHS)
    assert lifecycle.training_job_claim(job=job)

    # What the job page would read after each write: the row itself, as written.
    writes: list[dict[str, Any]] = []
    flush = ProgressWriter.flush

    def recording_flush(self: ProgressWriter, *, force: bool = False) -> bool:
        result = flush(self, force=force)
        writes.append(
            TrainingJob.objects.filter(pk=self.job_id)
            .values("phase", "current_step", "total_steps", "progress_percentage")
            .get()
        )
        return result

    monkeypatch.setattr(ProgressWriter, "flush", recording_flush)
    assert run_training(job_id=job.pk) == 0  # the training process's body, in this process
    job.refresh_from_db()
    assert job.status == "completed", (job.reason, job.log_tail)
    writes.append({"phase": job.phase, "current_step": job.current_step,
                   "total_steps": job.total_steps, "progress_percentage": job.progress_percentage})

    percents = [w["progress_percentage"] for w in writes]
    assert percents == sorted(percents), "the bar went backwards"
    total = job.total_steps
    assert total == EPOCHS * (total // EPOCHS) > 0

    def in_training(w: dict[str, Any]) -> bool:
        return w["phase"] == "training" and w["current_step"] > 0

    training = [w for w in writes if in_training(w)]
    assert {w["current_step"] for w in training} == set(range(1, total + 1))
    for w in training:
        assert w["progress_percentage"] == pytest.approx(
            training_percent(w["current_step"], total), abs=0.01
        ), w

    between_epochs = [w for w in writes if w["phase"] == "evaluating" and
                      0 < w["current_step"] < total]
    assert {w["current_step"] for w in between_epochs} == {total // EPOCHS, 2 * total // EPOCHS}
    for w in between_epochs:  # an evaluation between epochs does not move the bar
        assert w["progress_percentage"] == pytest.approx(
            training_percent(w["current_step"], total), abs=0.01
        ), w

    after_training = writes[max(i for i, w in enumerate(writes) if in_training(w)) + 1:]
    final_phases = [w["phase"] for w in after_training]
    assert "evaluating" in final_phases
    assert "saving" in final_phases
    for w in after_training[:-1]:
        assert training_percent(total, total) <= w["progress_percentage"] < 100, w
    assert after_training[-1] == {**after_training[-1], "phase": "done",
                                  "progress_percentage": 100.0}
