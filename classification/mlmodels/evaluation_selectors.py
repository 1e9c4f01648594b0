"""Evaluation job reads, always through projects.policy: one outside the user's projects is a
404. The progress payload is what the page polls and what the API returns."""

from __future__ import annotations

import time
import uuid
from typing import Any

from django.db.models import QuerySet
from django.http import Http404

from classification.mlmodels.evaluation_model import EvaluationJob
from classification.mlmodels.overlap import overlap_warning
from projects import policy

S = EvaluationJob.Status


def evaluation_job_uuid(job_id: Any) -> uuid.UUID | None:
    """The id as a UUID, or None for text that is none (a URL's 32 hex characters)."""
    if isinstance(job_id, uuid.UUID):
        return job_id
    try:
        return uuid.UUID(hex=str(job_id))
    except ValueError:
        return None


def _rows() -> QuerySet[EvaluationJob]:
    return EvaluationJob.objects.select_related("ml_model", "owner")


def evaluation_job_list(*, user: Any, ml_model: Any = None,
                        project: Any = None) -> QuerySet[EvaluationJob]:
    """The evaluations in the user's projects (one model's, when given), newest first."""
    rows = _rows() if ml_model is None else _rows().filter(ml_model=ml_model)
    return policy.scope(rows, user=user, project=project)


def evaluation_job_get(*, user: Any, job_id: Any,
                       action: str = policy.Action.VIEW) -> EvaluationJob:
    """The job if the user may do `action` on it: Http404 outside their projects (or for an id
    that is no UUID), RoleRequired (403) when their role there may not."""
    pk = evaluation_job_uuid(job_id)
    if pk is None:
        raise Http404("No such evaluation.")
    return policy.object_get(_rows(), user=user, action=action, pk=pk)


def evaluation_job_progress(*, job: EvaluationJob) -> dict[str, Any]:
    """Percent scored, seconds left (None when unknown) and a line saying where it stands."""
    total, done = job.total, job.processed or 0
    progress = 100.0 * done / total if total else 0.0
    if job.status == S.COMPLETED:
        progress = 100.0
    eta = None
    if job.status == S.RUNNING and job.started_at and done and total and done < total:
        elapsed = time.time() - job.started_at.timestamp()
        eta = max(0.0, elapsed / done * (total - done))
    if job.status == S.QUEUED:
        phase = "waiting for the inference worker"
    elif job.status == S.RUNNING:
        phase = job.message or "starting"
        if total is not None:
            phase += f": {done} of {total} rows"
        if job.cancel_requested:
            phase += " · cancelling"
    else:
        phase = job.get_status_display()
    return {"progress": round(progress, 1), "eta_seconds": eta, "phase_display": phase}


def evaluation_job_payload(*, job: EvaluationJob) -> dict[str, Any]:
    """The keys jobs.js reads for training jobs and batches, plus the evaluation's own."""
    return {
        "id": job.pk.hex, "status": job.status, "status_display": job.get_status_display(),
        **evaluation_job_progress(job=job),
        "processed": job.processed, "total": job.total, "message": job.message,
        "reason": job.reason, "filename": job.filename, "overrides": job.overrides,
        "model_id": job.ml_model_id, "model_name": job.ml_model.name,
        "created_at": job.created_at.isoformat(),
        "finished_at": job.finished_at.isoformat() if job.finished_at else None,
        "is_active": job.is_active, "is_problem": job.is_problem,
        "cancel_requested": job.cancel_requested, "done": job.status == S.COMPLETED,
        "result": job.result,
        "overlap_warning": overlap_warning((job.result or {}).get("training_overlap")),
    }
