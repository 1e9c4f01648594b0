"""Classification writes: the public face of training jobs, prediction and evaluation.

The job machinery lives in ``classification.jobs``; views, the API, management commands and
tasks call only the functions exported here.
"""

from __future__ import annotations

from classification.jobs.cleanup import mlmodel_delete
from classification.jobs.evaluation import mlmodel_evaluation_columns
from classification.jobs.lifecycle import (
    training_job_cancel,
    training_job_claim,
    training_job_create,
    training_job_finish,
    training_job_for_delivery,
    training_job_resume,
)
from classification.jobs.prediction import (
    mlmodel_evaluate_file,
    mlmodel_evaluate_upload,
    mlmodel_predict,
)
from classification.jobs.reaper import (
    training_jobs_cleanup,
    training_jobs_reconcile_on_worker_start,
)
from classification.jobs.supervisor import training_job_run

__all__ = [
    "mlmodel_delete",
    "mlmodel_evaluate_file",
    "mlmodel_evaluate_upload",
    "mlmodel_evaluation_columns",
    "mlmodel_predict",
    "training_job_cancel",
    "training_job_claim",
    "training_job_create",
    "training_job_finish",
    "training_job_for_delivery",
    "training_job_resume",
    "training_job_run",
    "training_jobs_cleanup",
    "training_jobs_reconcile_on_worker_start",
]
