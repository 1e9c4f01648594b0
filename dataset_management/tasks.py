"""Datasets' Celery task: thin, it loads the import by id and calls one service."""

from __future__ import annotations

from celery import shared_task


# Acknowledged on receipt (CELERY_TASK_ACKS_LATE is off): a worker killed mid-import never gets
# it again; the maintenance sweep fails the row with the reason instead.
@shared_task(name="dataset_management.tasks.import_run", ignore_result=True)
def import_run(job_id: int) -> None:
    from dataset_management.imports import import_job_run

    import_job_run(job_id=job_id)
