"""A batch of a million articles through several inference workers: throughput, peak memory per
worker, and a check that the output is complete and in input order.

    .venv/bin/python scripts/benchmark_sharded_batch.py [--rows 1000000] [--workers 2]
        [--model tfidf|minilm] [--model-dir DIR] [--kill-one] [--no-baseline]

The input is the demo's texts repeated, each row with its own id (100000000 + row), as a
semicolon CSV (id;title;abstract). Real Celery inference workers (threads pool, one slot each,
as start_m1.sh runs them) share a scratch SQLite database, media folder and Redis queues of
this run's own. Two sides, measured in the same run:

  baseline   one worker, sharding off (BATCH_SHARD_ROWS above the file): the batch path as
             it was, in one piece
  sharded    --workers workers, BATCH_SHARD_ROWS (default 50,000): cut, run, assembled

The model: `tfidf` (tfidf_logreg fitted here on the demo split) or `minilm` (--model-dir, an
engine artifact, else one epoch fine-tuned here). With --kill-one, the sharded side SIGKILLs
one worker once both are part-way through a shard, then runs the reaper as beat's maintenance
would: the shard runs again on the survivor. Peak RSS is each worker's VmHWM (the kernel's
high-water mark), and the web's is this process's own: it streams the upload and never reads
the file. Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import _bench_common as common
from benchmark_web import configure_env

ROOT = Path(__file__).resolve().parents[1]
ID_BASE = 100_000_000


def write_articles(path: Path, rows: int) -> None:
    data = common.read_challenge_csv(common.DEMO_CSV)
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out, delimiter=";")
        writer.writerow(["id", "title", "abstract"])
        for i in range(rows):
            title, _, abstract = data.texts[i % len(data)].partition("\n\n")
            writer.writerow([ID_BASE + i + 1, title, abstract])


def peak_rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


class Worker:
    def __init__(self, env: dict[str, str], log: Path, name: str) -> None:
        self.log = log
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "medlitbot_project", "worker",
             "--pool=threads", "--concurrency=1", f"--queues={env['QUEUE']}",
             "--without-gossip", "--without-mingle", "--optimization=fair", "--loglevel=WARNING",
             f"--hostname={name}@%h"],
            cwd=ROOT, env=env, stdout=log.open("ab"), stderr=subprocess.STDOUT)
        self.peak = 0.0
        self.cpu = 0.0

    def sample(self) -> None:
        if self.proc.poll() is None:
            self.peak = max(self.peak, peak_rss_mb(self.proc.pid))
            try:
                fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
                self.cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
            except (OSError, IndexError, ValueError):
                pass

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def workers_start(env: dict[str, str], count: int, scratch: Path, side: str) -> list[Worker]:
    from core import selectors

    workers = [Worker(env, scratch / "logs" / f"{side}-{i}.log",
                      f"{side}{i}-{uuid.uuid4().hex[:6]}") for i in range(count)]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # live heartbeats: the shard plan counts them
        [coverage] = selectors.worker_queue_coverage(queues=[env["QUEUE"]])
        if len([w for w in coverage.live if w.pid in {x.proc.pid for x in workers}]) == count:
            return workers
        if any(w.proc.poll() is not None for w in workers):
            break
        time.sleep(0.5)
    for w in workers:
        w.stop()
    raise SystemExit(f"workers did not start; see {scratch / 'logs'}")


def check_output(batch: Any, rows: int) -> None:
    """Streamed: every row once, in input order, with its own id; the JSON Lines too."""
    from classification.batches import storage

    folder = storage.absolute(batch.result_path).parent
    with (folder / storage.RESULT_NAME).open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        row_at, id_at = header.index("row"), header.index("id")
        count = 0
        for count, cells in enumerate(reader, start=1):
            if cells[row_at] != str(count) or cells[id_at] != str(ID_BASE + count):
                raise SystemExit(f"CSV row {count} out of order: {cells[:2]}")
    if count != rows:
        raise SystemExit(f"CSV holds {count} rows of {rows}")
    with (folder / storage.RECORDS_NAME).open(encoding="utf-8") as handle:
        for count, line in enumerate(handle, start=1):
            if json.loads(line)["row"] != count:
                raise SystemExit(f"JSON Lines item {count} out of order")
    if count != rows:
        raise SystemExit(f"JSON Lines holds {count} items of {rows}")


def kill_one(batch: Any, workers: list[Worker]) -> dict[str, Any] | None:
    """Once two workers are each past a checkpoint in a shard: SIGKILL one, then reap."""
    from classification.batches.services import batch_jobs_reap
    from classification.models import BatchShard

    running = list(BatchShard.objects.filter(batch=batch, status="running"))
    if len({s.worker for s in running}) < 2:
        return None
    victim = next((s for s in running if s.processed >= 2048), None)
    if victim is None:
        return None
    pid = int(victim.worker.split(" ")[-2])
    worker = next(w for w in workers if w.proc.pid == pid)
    worker.sample()
    worker.proc.send_signal(signal.SIGKILL)
    worker.proc.wait()
    reaped = batch_jobs_reap(stale_seconds=3600)
    victim.refresh_from_db()
    return {"killed_pid": pid, "shard": victim.index + 1, "lost_after": victim.processed,
            "reaped": reaped, "reason": victim.reason}


def run_side(side: str, args: argparse.Namespace, env: dict[str, str], owner: Any,
             ml_model: Any, source: Path, scratch: Path) -> dict[str, Any]:
    from django.core.files import File

    from classification.batches import services, storage
    from classification.models import BatchJob

    count = args.workers if side == "sharded" else 1
    shard_rows = args.shard_rows if side == "sharded" else args.rows + 1
    side_env = {**env, "BATCH_SHARD_ROWS": str(shard_rows),
                "OMP_NUM_THREADS": str(max(1, (os.cpu_count() or 1) // count))}
    os.environ["BATCH_SHARD_ROWS"] = str(shard_rows)
    from django.conf import settings

    settings.BATCH_SHARD_ROWS = shard_rows
    workers = workers_start(side_env, count, scratch, side)
    web_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    started = time.perf_counter()
    with source.open("rb") as handle:
        batch = services.batch_job_create(owner=owner, ml_model=ml_model,
                                          uploaded_file=File(handle, name=source.name))
    killed = None
    try:
        while True:
            batch.refresh_from_db()
            for w in workers:
                w.sample()
            if batch.status not in BatchJob.ACTIVE_STATUSES:
                break
            if args.kill_one and side == "sharded" and killed is None:
                killed = kill_one(batch, workers)
            time.sleep(0.5)
        seconds = time.perf_counter() - started
    finally:
        for w in workers:
            w.sample()
            w.stop()
    if batch.status != "completed":
        raise SystemExit(f"{side}: batch ended {batch.status}: {batch.reason}")
    check_output(batch, args.rows)
    web_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rate = args.rows / seconds
    figures = {
        "workers": count, "shards": batch.shard_count, "seconds": round(seconds, 1),
        "texts_per_s": round(rate, 1), "texts_per_s_per_worker_core": round(rate / count, 1),
        "peak_rss_mb_per_worker": [round(w.peak) for w in workers],
        "cpu_s_per_worker": [round(w.cpu, 1) for w in workers],
        "web_peak_rss_mb_before_after": [round(web_before), round(web_after)],
        "output": "complete and in input order", "killed": killed,
    }
    storage.remove_folder(storage.batch_folder(owner_id=owner.pk, batch_id=batch.pk))
    return figures


def model_make(args: argparse.Namespace, owner: Any, scratch: Path) -> Any:
    from classification.engine.artifacts import read_manifest
    from classification.ml_models import TrainConfig, create_classifier
    from classification.models import MLModel

    if args.model == "tfidf":
        train, val, _ = common.load_split(None, None, 42)
        clf = create_classifier("tfidf_logreg")
        clf.fit(train, val, TrainConfig(), lambda e: None, lambda: False)
        path = scratch / "artifacts" / "tfidf"
        clf.save(str(path))
    elif args.model_dir:
        path = Path(args.model_dir)
    else:
        from benchmark_inference import train_quick_model

        path = Path(train_quick_model(scratch, 42, 1500))
    manifest = read_manifest(str(path))
    return MLModel.objects.create(
        owner=owner, name=args.model, model_type=manifest["model_type"],
        status=MLModel.Status.TRAINED, artifact_path=str(path),
        label_names=manifest["label_names"], is_multilabel=manifest["multi_label"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--shard-rows", type=int, default=50_000)
    parser.add_argument("--model", choices=("tfidf", "minilm"), default="tfidf")
    parser.add_argument("--model-dir", default=None)
    parser.add_argument("--kill-one", action="store_true")
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="medlitbot-shards-"))
    env = configure_env(scratch, args.database_url)
    prefix = f"bench-{uuid.uuid4().hex[:8]}-"
    env.update({"CELERY_QUEUE_PREFIX": prefix, "QUEUE": f"{prefix}inference",
                "MAX_UPLOAD_SIZE_MB": "8192", "PROGRESS_WRITE_INTERVAL": "1",
                "WORKER_HEARTBEAT_INTERVAL": "2"})
    os.environ.update(env)
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
                   cwd=ROOT, env=env, check=True)
    import django

    django.setup()
    import psutil
    from django.contrib.auth import get_user_model

    owner = get_user_model().objects.create_user("bench", password="x")
    ml_model = model_make(args, owner, scratch)
    source = scratch / "articles.csv"
    write_articles(source, args.rows)
    print(f"rows={args.rows} ({source.stat().st_size / 1e6:.0f} MB) model={args.model} "
          f"cores={os.cpu_count()} load={psutil.getloadavg()[0]:.1f}", flush=True)
    sides = ([] if args.no_baseline else ["baseline"]) + ["sharded"]
    results: dict[str, Any] = {}
    try:
        for side in sides:
            results[side] = run_side(side, args, env, owner, ml_model, source, scratch)
            print(f"{side:9s} {json.dumps(results[side])}", flush=True)
    finally:
        if not os.environ.get("KEEP_SCRATCH"):
            shutil.rmtree(scratch, ignore_errors=True)
    if "baseline" in results:
        ratio = results["sharded"]["texts_per_s"] / results["baseline"]["texts_per_s"]
        results["sharded_over_baseline"] = round(ratio, 2)
        print(f"sharded over one worker: {ratio:.2f}x")
    print(json.dumps({"rows": args.rows, "model": args.model, "cores": os.cpu_count(),
                      "load_average": psutil.getloadavg()[0], **results}))


if __name__ == "__main__":
    main()
