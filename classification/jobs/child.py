"""Entry point of the spawned training process. Imported before django.setup(): keep it bare."""

from __future__ import annotations

import contextlib
import os
import sys


def child_main(job_id: int, parent_pid: int) -> None:
    from core import processes

    # First thing: never outlive the worker that supervises us.
    processes.die_with_parent(parent_pid)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import django

    django.setup()
    from django.conf import settings

    if settings.TRAINING_NICE > 0:
        with contextlib.suppress(OSError):  # lowering priority needs no rights; fail soft anyway
            os.nice(settings.TRAINING_NICE)
    from classification.jobs.training import run_training

    sys.exit(run_training(job_id=job_id))
