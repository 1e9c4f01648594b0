"""Classification writes: the public face of training jobs and of model operations.

The job machinery lives in ``classification.jobs``, what is done with a model once it exists
(predict, evaluate, explain, delete) in ``classification.mlmodels``. Views, the API, management
commands and tasks call only the functions exported here; nothing inside jobs/, mlmodels/ or
batches/ imports this module.
"""

from __future__ import annotations

from classification.jobs.lifecycle import (
    TRAINING_TASK,
    mlmodel_default_name,
    training_job_cancel,
    training_job_claim,
    training_job_create,
    training_job_finish,
    training_job_for_delivery,
    training_job_resume,
    training_model_path_errors,
)
from classification.jobs.reaper import (
    training_jobs_cleanup,
    training_jobs_reconcile_on_worker_start,
)
from classification.jobs.supervisor import training_job_run
from classification.mlmodels.deletion import mlmodel_delete
from classification.mlmodels.evaluation import mlmodel_evaluation_columns
from classification.mlmodels.evaluation_jobs import (
    EVALUATION_TASK,
    EvaluationError,
    evaluation_job_cancel,
    evaluation_job_create,
    evaluation_job_rerun,
    evaluation_job_run,
)
from classification.mlmodels.evaluation_scoring import (
    mlmodel_evaluate_file,
    mlmodel_evaluate_upload,
)
from classification.mlmodels.prediction import mlmodel_predict, mlmodel_texts

__all__ = [
    "EVALUATION_TASK",
    "TRAINING_TASK",
    "EvaluationError",
    "evaluation_job_cancel",
    "evaluation_job_create",
    "evaluation_job_rerun",
    "evaluation_job_run",
    "mlmodel_default_name",
    "mlmodel_delete",
    "mlmodel_evaluate_file",
    "mlmodel_evaluate_upload",
    "mlmodel_evaluation_columns",
    "mlmodel_predict",
    "mlmodel_texts",
    "training_job_cancel",
    "training_job_claim",
    "training_job_create",
    "training_job_finish",
    "training_job_for_delivery",
    "training_job_resume",
    "training_job_run",
    "training_jobs_cleanup",
    "training_jobs_reconcile_on_worker_start",
    "training_model_path_errors",
]
