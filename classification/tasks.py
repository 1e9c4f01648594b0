"""Celery tasks, thin: load by id, call one service. Also the worker-start reconciliation.

Services send these by name (core.queueing), under the names registered here, so they never
import this module and it may import them at the top.
"""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task
from celery.signals import worker_ready

from classification import services
from classification.batches import services as batch_services

logger = logging.getLogger(__name__)


@shared_task(name=services.TRAINING_TASK, bind=True, ignore_result=True)
def start_model_training(
    self: Any, model_id: int, config: dict[str, Any] | None = None, job_id: int | None = None
) -> int | None:
    """Train `model_id`: runs the queued job for it, or creates one (the seed's call).

    ``start_model_training.delay(model.id, {"total_epochs": 1, "batch_size": 4})``
    """
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
    try:
        services.training_jobs_reconcile_on_worker_start()
    except Exception:  # a reconciliation bug must never stop the worker from starting
        logger.exception("reconciling training jobs at worker start failed")


# Acked on receipt, like training: a batch whose worker dies is sent again, with a fresh message,
# by the next worker start (or the reaper), and resumes from its checkpoint, or is failed with a
# plain reason. Not acks_late: with Redis, a SIGKILLed worker's unacked message would only come
# back after the visibility timeout (hours), and a redelivery cannot tell a resume from a rerun.
@shared_task(name=batch_services.BATCH_TASK, ignore_result=True, acks_late=False)
def batch_job_run(batch_id: str) -> str | None:
    """Classify one queued batch on the inference worker (routed by CELERY_TASK_ROUTES)."""
    return batch_services.batch_job_run(batch_id=batch_id)


# Acked on receipt too: a message only wakes a worker for a sharded batch; which shard it runs
# is claimed from the rows (classification/batches/shards.py), so a lost message loses no work.
@shared_task(name=batch_services.SHARD_TASK, ignore_result=True, acks_late=False)
def batch_shards_run(batch_id: str) -> str | None:
    """Run a sharded batch's queued shards, and assemble it if they are all done."""
    return batch_services.batch_shards_work(batch_id=batch_id)


@worker_ready.connect
def reconcile_batches_on_worker_start(sender: Any = None, **kwargs: Any) -> None:
    # A worker killed mid-batch left its batch "running": resume it (or fail it), but only where
    # this host can see that the worker process is dead.
    try:
        batch_services.batch_jobs_reconcile_on_worker_start()
    except Exception:  # a reconciliation bug must never stop the worker from starting
        logger.exception("reconciling batches at worker start failed")


# Acked on receipt, like batches: an evaluation whose worker dies is failed by the maintenance
# sweep (evaluating again is cheap), never run twice by a redelivery.
@shared_task(name=services.EVALUATION_TASK, ignore_result=True, acks_late=False)
def evaluation_job_run(job_id: str) -> str | None:
    """Score one queued evaluation on the inference worker (routed by CELERY_TASK_ROUTES)."""
    return services.evaluation_job_run(job_id=job_id)
