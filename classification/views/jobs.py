from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from classification import services
from classification.history.selectors import status_changes_for
from classification.models import TrainingJob
from classification.selectors import training_job_queue_positions
from classification.views.presenters import (
    is_single_pass,
    job_durations,
    job_history_window,
    job_phase_display,
    job_reason_plain,
    job_settings,
    resume_banner,
)
from projects import policy

# The poll endpoint reads only these columns: metrics_history and log_tail are the only large
# ones and the page needs both, but the ML model row is never loaded (one indexed join on pk).
PROGRESS_FIELDS = (
    "id", "status", "phase", "progress_percentage", "current_epoch", "total_epochs",
    "current_step", "total_steps", "eta_seconds", "last_loss", "heartbeat_at", "progress_at",
    "reason", "attempt", "cancel_requested", "started_at", "finished_at", "updated_at",
    "ml_model_id", "ml_model__status", "ml_model__model_type",
)


def job_get(request: HttpRequest, pk: int, action: str = policy.Action.VIEW) -> TrainingJob:
    """The job in any of the person's projects: 404 outside them, 403 below `action`'s role."""
    return policy.object_get(
        TrainingJob.objects.select_related("ml_model", "ml_model__dataset"),
        user=request.user, action=action, pk=pk,
    )


@login_required
def job_detail(request: HttpRequest, pk: int) -> HttpResponse:
    job = job_get(request, pk)
    waiting = job.status == job.Status.QUEUED
    positions = training_job_queue_positions(queue=job.queue) if waiting else {}
    return render(request, "classification/job_detail.html", {
        "job": job,
        "queue_position": positions.get(job.pk),
        "queue_length": len(positions),
        "model": job.ml_model,
        "reason_plain": job_reason_plain(status=job.status, reason=job.reason,
                                         model_type=job.ml_model.model_type),
        # Epochs, steps, loss and the presets' knobs mean nothing to a one-pass fit.
        "single_pass": is_single_pass(job.ml_model.model_type),
        "settings_rows": job_settings(model_type=job.ml_model.model_type, config=job.config),
        "durations": job_durations(job),
        "is_search": job.ml_model.model_type == "search",
        "status_history": status_changes_for(job=job),
        # The job may be in a project other than the current one: its own role decides.
        "may": policy.actions_on(user=request.user, obj=job),
    })


@require_GET
def job_progress(request: HttpRequest, pk: int) -> JsonResponse:
    """The small JSON the job page polls every 1-2 s; must stay one query and a few ms."""
    if not request.user.is_authenticated:
        return JsonResponse({"detail": "Log in first."}, status=401)
    fields = list(PROGRESS_FIELDS)
    if request.GET.get("history") != "0":  # dashboard rows draw no curves
        fields.append("metrics_history")
    if request.GET.get("log") == "1":  # the job page; the dashboard rows skip these columns
        fields += ["log_tail", "device_plan", "leaderboard"]
    # order_by(): a pk lookup needs no ORDER BY, and compiling one costs more than running it.
    row = next(iter(
        policy.scope(TrainingJob.objects.filter(pk=pk), user=request.user)
        .order_by().values(*fields)[:1]
    ), None)
    if row is None:
        return JsonResponse({"detail": "Not found."}, status=404)
    return JsonResponse(progress_payload(row, since=_int(request.GET.get("since")),
                                         last=request.GET.get("last")))


def progress_payload(row: dict, *, since: int = 0, last: str | None = None) -> dict:
    """Shared by the page endpoint and the API's job status, from a `.values()` row."""
    now = timezone.now()
    heartbeat = row["heartbeat_at"]
    status = row["status"]
    payload = {
        "id": row["id"],
        "model_id": row["ml_model_id"],
        "model_status": row.get("ml_model__status"),
        "status": status,
        "status_display": TrainingJob.Status(status).label,
        "phase": row["phase"],
        "phase_display": job_phase_display(row["phase"]),
        "progress": round(row["progress_percentage"] or 0.0, 2),
        "epoch": row["current_epoch"],
        "total_epochs": row["total_epochs"],
        "step": row["current_step"],
        "total_steps": row["total_steps"],
        "eta_seconds": row["eta_seconds"],
        "loss": row["last_loss"],
        "heartbeat_age_seconds": (now - heartbeat).total_seconds() if heartbeat else None,
        "attempt": row["attempt"],
        "cancel_requested": row["cancel_requested"],
        "is_active": status in TrainingJob.ACTIVE_STATUSES,
        "is_resumable": status in TrainingJob.RESUMABLE_STATUSES,
        "is_problem": status in TrainingJob.PROBLEM_STATUSES,
        "reason": row["reason"],
        "reason_plain": job_reason_plain(status=status, reason=row["reason"],
                                         model_type=row.get("ml_model__model_type") or ""),
        **job_history_window(row.get("metrics_history"), since=since, last=last),
        "updated_at": row["updated_at"].isoformat() if row["updated_at"] else None,
    }
    if "log_tail" in row:
        payload["log_tail"] = row["log_tail"]
    if "device_plan" in row:
        payload["device_plan"] = row["device_plan"] or {}
    if row.get("leaderboard"):
        payload["leaderboard"] = row["leaderboard"]
    return payload


def _int(value: str | None) -> int:
    try:
        return max(0, int(value or 0))
    except ValueError:
        return 0


@login_required
@require_POST
def job_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    job = job_get(request, pk, policy.Action.CANCEL)
    if not job.is_active:
        messages.warning(request, "This job is not running, so there is nothing to cancel.")
    else:
        services.training_job_cancel(job=job, actor=request.user)
        messages.info(request, "Cancellation requested. The job stops at the next safe point.")
    return redirect("classification:job_detail", pk=job.pk)


@login_required
@require_POST
def job_resume(request: HttpRequest, pk: int) -> HttpResponse:
    job = job_get(request, pk, policy.Action.RESUME)
    if not job.is_resumable:
        messages.warning(request, "Only failed, stalled or cancelled jobs can be resumed.")
        return redirect("classification:job_detail", pk=job.pk)
    try:
        services.training_job_resume(job=job, actor=request.user)
    except ValueError as exc:
        messages.error(request, str(exc))
        return redirect("classification:job_detail", pk=job.pk)
    # training_job_resume refreshed `job`: checkpoint_path is what the worker will start from.
    messages.success(request, resume_banner(job=job))
    return redirect("classification:job_detail", pk=job.pk)
