"""What classification hands core to run (core.registry): beat's maintenance steps, the /metrics
families about training jobs, and how a worker's heartbeat row names a task's job.

Registered by ClassificationConfig.ready(). The steps import their services when they run, so
setting Django up in a process never loads the training stack.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db.models import Count, DurationField, ExpressionWrapper, F, Min, Q, Sum
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.utils import floatToGoString

from core import registry

# From a TF-IDF fit (seconds) to a fine-tuned transformer (hours), up to JOB_HARD_TIME_LIMIT.
JOB_DURATION_BUCKETS = (
    5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1200.0, 1800.0, 3600.0, 7200.0, 14400.0,
    21600.0, 43200.0,
)


def stuck_training_jobs_end() -> str:
    from classification import services

    checks = services.training_jobs_cleanup(stale_seconds=2 * settings.HEARTBEAT_TIMEOUT)
    acted = [c for c in checks if c.problem]
    return f"{len(acted)} stuck training job(s) ended" if acted else ""


def dead_batches_reap() -> str:
    from classification.batches.services import batch_jobs_reap

    # A running batch writes progress about once a second; one chunk on a slow CPU can take
    # several, so five minutes of silence means its worker is gone.
    ended = batch_jobs_reap(stale_seconds=300)
    return f"{len(ended)} batch(es) whose worker is gone resumed or failed" if ended else ""


def dead_evaluations_fail() -> str:
    from classification.mlmodels.evaluation_maintenance import evaluation_jobs_reap

    # Like a batch: progress is written about once a second, so five minutes of silence means
    # the worker is gone. Kept files past a day are removed here too.
    ended = evaluation_jobs_reap(stale_seconds=300)
    return f"{len(ended)} evaluation(s) whose worker or message is gone failed" if ended else ""


def leftover_checkpoints_remove() -> str:
    from classification.jobs.cleanup import training_job_dirs_sweep

    # Jobs ended while no supervisor ran (a dead worker, the reaper) still hold every checkpoint.
    removed = training_job_dirs_sweep()
    return f"{len(removed)} leftover checkpoint folder(s) removed" if removed else ""


def training_jobs_read() -> list[Metric]:
    from classification.models import TrainingJob

    counts = {status: 0 for status in TrainingJob.Status.values}
    for row in TrainingJob.objects.order_by().values("status").annotate(n=Count("pk")):
        counts[row["status"]] = row["n"]
    by_status = GaugeMetricFamily(
        "medlitbot_training_jobs", "Training jobs by status.", labels=["status"]
    )
    for status, n in counts.items():
        by_status.add_metric([status], n)
    oldest = TrainingJob.objects.filter(status=TrainingJob.Status.QUEUED).aggregate(
        at=Min("updated_at")
    )["at"]
    waiting = GaugeMetricFamily(
        "medlitbot_training_queue_oldest_wait_seconds",
        "How long the job at the head of the training queue has waited (0: none queued).",
    )
    waiting.add_metric([], (timezone.now() - oldest).total_seconds() if oldest else 0.0)
    return [by_status, waiting]


def training_job_durations_read() -> list[Metric]:
    """A histogram of finished jobs' last attempt (started_at -> finished_at), by outcome.

    Counted by the database, so the cost does not grow with rows shipped to Python.
    """
    from classification.models import TrainingJob

    duration = ExpressionWrapper(F("finished_at") - F("started_at"), output_field=DurationField())
    buckets = {
        f"le_{i}": Count("pk", filter=Q(duration__lte=timedelta(seconds=bound)))
        for i, bound in enumerate(JOB_DURATION_BUCKETS)
    }
    rows = (
        TrainingJob.objects.filter(started_at__isnull=False, finished_at__isnull=False)
        .exclude(status__in=TrainingJob.ACTIVE_STATUSES)
        .annotate(duration=duration)
        .order_by()
        .values("status", "ml_model__model_type")
        .annotate(n=Count("pk"), total=Sum("duration"), **buckets)
    )
    family = HistogramMetricFamily(
        "medlitbot_training_job_duration_seconds",
        "Wall-clock time of finished training jobs (their last attempt), by outcome and "
        "model type.",
        labels=["status", "model_type"],
    )
    for row in rows:
        points = [(floatToGoString(bound), row[f"le_{i}"])
                  for i, bound in enumerate(JOB_DURATION_BUCKETS)]
        points.append(("+Inf", row["n"]))
        total = row["total"]
        seconds = total.total_seconds() if isinstance(total, timedelta) else float(total or 0)
        family.add_metric([row["status"], row["ml_model__model_type"] or ""], points,
                          sum_value=max(0.0, seconds))
    return [family]


def training_task_describe(args: list[Any], kwargs: dict[str, Any]) -> str:
    # start_model_training(model_id, config=None, job_id=None), sent either way.
    job_id = kwargs.get("job_id") or (args[2] if len(args) > 2 else None)
    if job_id:
        return f"training job {job_id}"
    model_id = kwargs.get("model_id") or (args[0] if args else None)
    return f"training model {model_id}" if model_id else "training"


def batch_task_describe(args: list[Any], kwargs: dict[str, Any]) -> str:
    batch = kwargs.get("batch_id") or kwargs.get("job_id") or (args[0] if args else "")
    # Batch ids may be 32 hex characters; the first 8 are enough to tell them apart.
    return f"batch {str(batch)[:8]}".strip()


def evaluation_task_describe(args: list[Any], kwargs: dict[str, Any]) -> str:
    job = kwargs.get("job_id") or (args[0] if args else "")
    return f"evaluation {str(job)[:8]}".strip()


def register() -> None:
    registry.maintenance_step_register(
        name="stuck_training_jobs", func=stuck_training_jobs_end, order=10)
    registry.maintenance_step_register(name="dead_batches", func=dead_batches_reap, order=20)
    registry.maintenance_step_register(
        name="leftover_checkpoints", func=leftover_checkpoints_remove, order=30)
    registry.maintenance_step_register(
        name="dead_evaluations", func=dead_evaluations_fail, order=25)
    registry.metrics_collector_register(name="jobs", func=training_jobs_read, order=10)
    registry.metrics_collector_register(
        name="job_durations", func=training_job_durations_read, order=20)
    registry.task_describer_register(
        task_name="classification.tasks.start_model_training", func=training_task_describe)
    registry.task_describer_register(
        task_name="classification.tasks.batch_job_run", func=batch_task_describe)
    registry.task_describer_register(
        task_name="classification.tasks.batch_shards_run", func=batch_task_describe)
    registry.task_describer_register(
        task_name="classification.tasks.evaluation_job_run", func=evaluation_task_describe)
