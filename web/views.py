import re
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.db.models import Case, Count, IntegerField, Q, Value, When
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone

from classification.models import BatchJob, MLModel, TrainingJob
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


_TRAINING_JOB = re.compile(r"^training job (\d+)\b")


def _visible_work(*, workers: list[WorkerHeartbeat], user: Any) -> dict[str, str]:
    """{worker hostname: link} for the busy workers whose job or batch the user may see.

    Every member sees the workers (they are shared), but what a worker runs belongs to a project:
    its id and link are shown only to that project's members. A task is matched by its Celery
    task id (the job's and the batch's own), a training job also by the id in its description.
    Two queries at most, and none when no worker is busy."""
    busy = [w for w in workers if w.state == WorkerHeartbeat.State.BUSY and w.current_job]
    if not busy:
        return {}
    task_ids = [w.current_task_id for w in busy if w.current_task_id]
    job_pks = [int(m.group(1)) for w in busy if (m := _TRAINING_JOB.match(w.current_job))]
    jobs = policy.scope(
        TrainingJob.objects.filter(Q(celery_task_id__in=task_ids) | Q(pk__in=job_pks)), user=user,
    ).values_list("pk", "celery_task_id")
    batches = policy.scope(BatchJob.objects.filter(celery_task_id__in=task_ids),
                           user=user).values_list("pk", "celery_task_id") if task_ids else []
    by_task = {task: reverse("classification:job_detail", args=[pk]) for pk, task in jobs}
    by_pk = {pk: reverse("classification:job_detail", args=[pk]) for pk, _task in jobs}
    by_task.update({task: reverse("classification:batch_detail", args=[pk.hex])
                    for pk, task in batches})
    links = {}
    for w in busy:
        # A description that names a job is decided by that job alone: a stale task id must
        # not lend its link to another project's job id.
        named = _TRAINING_JOB.match(w.current_job)
        link = by_pk.get(int(named.group(1))) if named else by_task.get(w.current_task_id)
        if link:
            links[w.hostname] = link
    return links


def worker_rows(*, workers: list[WorkerHeartbeat], user: Any) -> list[dict[str, Any]]:
    """The workers card: one row per worker that has written a heartbeat; what a busy worker
    runs is named (and linked) only for a viewer who may see it, else the row just says busy."""
    now = timezone.now()
    visible = _visible_work(workers=workers, user=user)
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
            "current_job": row.current_job if live and row.hostname in visible else "",
            "current_job_url": visible.get(row.hostname, ""),
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
            "workers": worker_rows(workers=workers, user=user),
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
