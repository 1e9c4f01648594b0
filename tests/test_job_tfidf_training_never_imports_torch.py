"""A TF-IDF job's training process (the real child entry point, in a fresh interpreter) trains,
saves and verifies its model without ever importing torch or transformers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from classification.jobs import lifecycle
from classification.models import MLModel, TrainingJob
from tests.job_support import fast_env
from tests.plugins.worker import ROOT, worker_env

# Runs what the spawned child runs, then reports which heavy libraries that process imported.
CHILD = """
import atexit, json, os, sys

def report():
    names = ("torch", "transformers", "sklearn")
    print(json.dumps({name: name in sys.modules for name in names}), flush=True)

atexit.register(report)
from classification.jobs.child import child_main

child_main(int(sys.argv[1]), os.getppid())
"""


def test_a_tfidf_training_process_never_imports_torch_or_transformers(
    transactional_db: None, slice_dataset: Any, user: Any, settings: Any, tmp_path: Path
) -> None:
    settings.MODEL_ARTIFACT_ROOT = tmp_path / "artifacts"
    model = MLModel.objects.create(
        owner=user, name="Fast", model_type="tfidf_logreg", dataset=slice_dataset
    )
    job = TrainingJob.objects.create(ml_model=model, config={}, total_epochs=1)
    assert lifecycle.training_job_claim(job=job)

    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(job.pk)], cwd=ROOT, env=worker_env(**fast_env()),
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    imported = json.loads(done.stdout.strip().splitlines()[-1])
    job.refresh_from_db()
    assert job.status == "completed", (job.reason, job.log_tail)
    assert imported == {"torch": False, "transformers": False, "sklearn": True}
    assert "importing torch" not in job.log_tail
    assert job.device_plan["device"] == "cpu"
    assert Path(job.ml_model.artifact_path, "manifest.json").is_file()
