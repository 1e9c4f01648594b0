#!/usr/bin/env python
"""Cancel latency of a real training: request -> `cancelled`, and what the job kept.

Starts a throw-away database and a solo training worker (as start_m1.sh does), trains --train
(default minilm) on the demo file until --steps steps are done, requests a cancel the way the
web button does, and times how long the job takes to end. Repeats --runs times.

    .venv/bin/python scripts/measure_cancel_latency.py [--train minilm] [--steps 5] [--runs 2]

The last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmark_web import (
    configure_env,
    migrate_and_seed,
    start_training,
    start_worker,
    stop_process,
)


def one_cancel(model_type: str, steps: int) -> dict:
    from classification import services
    from classification.models import TrainingJob

    job = TrainingJob.objects.get(pk=start_training(model_type))
    while job.current_step < steps:
        time.sleep(0.2)
        job.refresh_from_db()
    requested = time.monotonic()
    services.training_job_cancel(job=job)
    while job.is_active:
        time.sleep(0.1)
        job.refresh_from_db()
    return {"job": job.pk, "status": job.status, "step_at_request": steps,
            "latency_s": round(time.monotonic() - requested, 2), "reason": job.reason}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", default="minilm")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--redis-db", type=int, default=14)
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="medlitbot-cancel-"))
    env = configure_env(scratch, None)
    env["REDIS_URL"] = env["CELERY_BROKER_URL"] = f"redis://127.0.0.1:6379/{args.redis_db}"
    env["CELERY_QUEUE_PREFIX"] = "cancel-bench-"
    migrate_and_seed(env, n_models=2, n_datasets=1)
    import redis

    redis.Redis.from_url(env["REDIS_URL"]).flushdb()
    worker = start_worker(env, scratch / "training.log")
    runs = []
    try:
        for _ in range(args.runs):
            runs.append(one_cancel(args.train, args.steps))
            print(f"{args.train}: cancel at step {args.steps} -> {runs[-1]['status']} in "
                  f"{runs[-1]['latency_s']} s\n  reason: {runs[-1]['reason']}")
    finally:
        stop_process(worker, signal.SIGTERM)
        shutil.rmtree(scratch, ignore_errors=True)
    print(json.dumps({"model_type": args.train, "runs": runs}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
