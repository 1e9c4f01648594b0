"""Entry point of the spawned training process. Imported before django.setup(): keep it bare."""

from __future__ import annotations

import os
import sys


def child_main(job_id: int, parent_pid: int) -> None:
    from classification.jobs import processes

    # First thing: never outlive the worker that supervises us.
    processes.die_with_parent(parent_pid)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import django

    django.setup()
    from classification.jobs.training import run_training

    sys.exit(run_training(job_id=job_id))
