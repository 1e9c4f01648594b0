"""setup_demo, run as start_m1.sh runs it (before any worker starts), also trains the demo
dataset's TF-IDF model through the ordinary supervised job, so a prediction works the moment
the start ends; run again, it trains nothing more."""

from __future__ import annotations

import subprocess
import sys

import pytest

from classification import services
from classification.models import MLModel, TrainingJob
from tests.job_support import fast_env
from tests.plugins.worker import ROOT, worker_env


def setup_demo() -> str:
    done = subprocess.run([sys.executable, "manage.py", "setup_demo"], cwd=ROOT,
                          env=worker_env(**fast_env()), capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout + done.stderr


@pytest.mark.worker
def test_setup_demo_trains_the_demo_model_once_and_it_predicts(transactional_db,
                                                               media_root) -> None:
    said = setup_demo()
    assert "trained the demo model" in said, said[-3000:]
    model = MLModel.objects.get()
    assert (model.model_type, model.status) == ("tfidf_logreg", MLModel.Status.TRAINED)
    job = TrainingJob.objects.get(ml_model=model)
    assert job.status == "completed", job.reason
    [answer] = services.mlmodel_predict(
        ml_model=model, texts=["Statin therapy and myocardial infarction in older adults"])
    assert set(answer["probabilities"]) == set(model.label_names)

    again = setup_demo()
    assert "trained the demo model" not in again
    assert MLModel.objects.count() == 1
    assert TrainingJob.objects.count() == 1
