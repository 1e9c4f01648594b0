"""Celery tasks, thin: load by id, call one service. Also the worker-start reconciliation."""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task
from celery.signals import worker_ready

logger = logging.getLogger(__name__)


@shared_task(bind=True, ignore_result=True)
def start_model_training(
    self: Any, model_id: int, config: dict[str, Any] | None = None, job_id: int | None = None
) -> int | None:
    """Train `model_id`: runs the queued job for it, or creates one (the seed's call).

    ``start_model_training.delay(model.id, {"total_epochs": 1, "batch_size": 4})``
    """
    from classification import services

    job = services.training_job_for_delivery(
        model_id=model_id, config=config, job_id=job_id, task_id=self.request.id
    )
    if job is None:
        return None
    services.training_job_run(job_id=job.pk)
    return job.pk


@worker_ready.connect
def reconcile_jobs_on_worker_start(sender: Any = None, **kwargs: Any) -> None:
    # A worker that died mid-training left its job "running"; say so before taking new work.
    from classification import services

    try:
        services.training_jobs_reconcile_on_worker_start()
    except Exception:  # a reconciliation bug must never stop the worker from starting
        logger.exception("reconciling training jobs at worker start failed")
