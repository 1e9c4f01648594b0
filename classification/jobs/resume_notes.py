"""What a resume of a job would start from, in the words its reason, log and banner share.

classification.paths words it from the disk and what it is handed; this module reads the rest
(the job's model type, a search's Optuna study) from the database.
"""

from __future__ import annotations

import logging

from classification import paths
from classification.engine.registry import REGISTRY
from classification.mlmodels.searches import SEARCH, search_study_load
from classification.models import TrainingJob

logger = logging.getLogger(__name__)


def model_type_kind(model_type: str) -> str:
    """The registry's kind of a model type; an unknown type counts as a transformer, whose
    wording reads the disk rather than promising anything."""
    spec = REGISTRY.get(model_type)
    return spec.kind if spec else "transformer"


def search_study_progress(*, job: TrainingJob) -> paths.StudyProgress | None:
    """The search's study as a resume would find it; None when it never started."""
    try:
        study = search_study_load(job=job)
    except KeyError:
        return None
    except Exception:  # the note must never cost a job its recorded end
        logger.warning("job %s: could not read its search study", job.pk, exc_info=True)
        return paths.StudyProgress(finished=None)
    done = [t for t in study.get_trials(deepcopy=False) if t.state.name == "COMPLETE"]
    best = max(done, key=lambda trial: trial.value or 0.0, default=None)
    return paths.StudyProgress(
        finished=len(done),
        best_kind=str(best.params.get("model_type", "")) if best else "",
        best_score=float(best.value) if best and best.value is not None else None,
        spent_minutes=float(study.user_attrs.get("spent_seconds", 0.0)) / 60,
        budget_minutes=float((job.config or {}).get("time_budget_minutes") or 0.0),
    )


def training_job_resume_words(*, job_id: int) -> paths.ResumeWords:
    """The job's resume point in words; call it once its training process is gone."""
    job = TrainingJob.objects.select_related("ml_model").filter(pk=job_id).first()
    model_type = job.ml_model.model_type if job is not None else ""
    kind = model_type_kind(model_type)
    study = search_study_progress(job=job) if job is not None and model_type == SEARCH else None
    return paths.resume_words(job_id=job_id, kind=kind, study=study)


def training_job_resume_note(*, job_id: int) -> str:
    """What follows "; " in a stalled, cancelled or failed job's reason."""
    return training_job_resume_words(job_id=job_id).reason
