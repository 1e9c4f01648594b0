import os
import socket

from celery import shared_task

from core.models import WorkerPing


@shared_task(name="core.worker_ping")
def worker_ping(token: str) -> None:
    WorkerPing.objects.get_or_create(
        token=token, defaults={"hostname": socket.gethostname(), "pid": os.getpid()}
    )


@shared_task(ignore_result=True)
def maintenance_run() -> None:
    """Scheduled by celery beat (CELERY_BEAT_SCHEDULE); the steps live in core.maintenance."""
    from core import maintenance

    maintenance.maintenance_run()
