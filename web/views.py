from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.db.models import Case, Count, IntegerField, Q, Value, When
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from classification.models import MLModel, TrainingJob
from classification.selectors import mlmodel_list_rows, training_job_queue_positions
from core import selectors as core_selectors
from core.models import WorkerHeartbeat
from dataset_management.models import Dataset
from dataset_management.selectors import dataset_list_rows
from projects import policy


def _queue_label(queue: str) -> str:
    # Test runs and shared Redis DBs prefix every queue; people think in "training".
    prefix = settings.CELERY_QUEUE_PREFIX
    return queue[len(prefix):] if prefix and queue.startswith(prefix) else queue


def worker_rows(*, workers: list[WorkerHeartbeat]) -> list[dict[str, Any]]:
    """The workers card: one row per worker that has written a heartbeat."""
    now = timezone.now()
    rows = []
    for row in workers:
        live = row.is_live(now=now)
        if row.state == WorkerHeartbeat.State.STOPPED:
            state, badge = "stopped", "cancelled"
        elif not live:
            state, badge = "missing", "failed"
        else:
            state = row.get_state_display().lower()
            badge = {"busy": "running", "stopping": "stalled"}.get(row.state, "ok")
        rows.append({
            "hostname": row.hostname, "host": row.host, "pool": row.pool,
            "queues": [_queue_label(q) for q in row.queues], "state": state, "badge": badge,
            "current_job": row.current_job if live and row.state == row.State.BUSY else "",
            "busy_since": row.busy_since, "heartbeat_age": row.age_seconds(now=now),
        })
    return rows


@login_required
def dashboard(request: HttpRequest) -> HttpResponse:
    """The current project's datasets, models and jobs (every member sees the same page)."""
    user, project = request.user, request.project
    # Running jobs first, newest first; then the queued ones in the order they will start.
    running_first = Case(
        When(status=TrainingJob.Status.RUNNING, then=Value(0)),
        default=Value(1), output_field=IntegerField(),
    )
    active_jobs = list(
        policy.scope(TrainingJob.objects.active(), user=user, project=project)
        .select_related("ml_model")
        .order_by(running_first, "-created_at")[:20]
    )
    # A position query per queue these jobs wait in (usually none or one): the dashboard has a
    # query budget, and the GPU queue's workers take its jobs in an order of their own.
    waiting = {job.queue for job in active_jobs if job.status == TrainingJob.Status.QUEUED}
    for job in active_jobs:
        job.queue_position = job.queue_length = None
    for queue in sorted(waiting):
        positions = training_job_queue_positions(queue=queue)
        for job in active_jobs:
            if job.queue == queue:
                job.queue_position, job.queue_length = positions.get(job.pk), len(positions)
    active_jobs.sort(key=lambda job: (job.status != TrainingJob.Status.RUNNING,
                                      job.queue_position or 0))  # stable: running keep recency
    recent_jobs = (
        policy.scope(TrainingJob.objects.all(), user=user, project=project)
        .exclude(status__in=TrainingJob.ACTIVE_STATUSES)
        .select_related("ml_model")
        .order_by("-updated_at")[:5]
    )
    models = mlmodel_list_rows(user=user, project=project)[:8]
    datasets = dataset_list_rows(user=user, project=project)[:8]
    workers = core_selectors.worker_heartbeat_list()
    unserved = [
        _queue_label(entry.queue)
        for entry in core_selectors.worker_queue_coverage(workers=workers) if not entry.ok
    ]
    return render(
        request,
        "dashboard.html",
        {
            "active_jobs": active_jobs,
            "recent_jobs": recent_jobs,
            "models": models,
            "datasets": datasets,
            "workers": worker_rows(workers=workers),
            "unserved_queues": unserved,
            "heartbeat_timeout": settings.WORKER_HEARTBEAT_TIMEOUT,
            "counts": {
                "datasets": policy.scope(Dataset.objects.all(), user=user,
                                         project=project).count(),
                **policy.scope(MLModel.objects.all(), user=user, project=project).aggregate(
                    models=Count("pk"),
                    trained=Count("pk", filter=Q(status=MLModel.Status.TRAINED)),
                ),
            },
        },
    )
