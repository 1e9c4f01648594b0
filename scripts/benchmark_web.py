#!/usr/bin/env python
"""Web benchmark: job-progress polling latency with 50 concurrent pollers while a job trains.

It builds a throw-away database (SQLite in a temp folder unless --database-url is given), seeds
a user with 100 datasets and 100 models, starts the server the way start_m1.sh does
(`manage.py runserver --noreload`, threaded, here with DEBUG=False) and a real Celery worker,
starts a real training (--train, default minilm on the 2,855-row demo file), and once it is in
its training phase runs 50 polling clients against that job's progress endpoint, then the same
clients back to back (a stress figure, no pause). The job is cancelled at the end.
--simulate replaces the real training with a thread that writes the job row once a second.

    .venv/bin/python scripts/benchmark_web.py [--clients 50] [--seconds 20] [--train minilm]

Needs Redis; the worker uses Redis DB --redis-db (default 14), which is flushed first. Prints
the figures; the last line is JSON. Target: progress p99 < 50 ms. Page render times:
scripts/benchmark_pages.py.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "bench-pass-123"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1))))
    return ordered[k]


def configure_env(scratch: Path, database_url: str | None) -> dict[str, str]:
    env = dict(os.environ)
    env.update({
        "DJANGO_SETTINGS_MODULE": "medlitbot_project.settings",
        "DEBUG": "False",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "MEDIA_ROOT": str(scratch / "media"),
        "MODEL_ARTIFACT_ROOT": str(scratch / "artifacts"),
        "LOG_DIR": str(scratch / "logs"),
        "LOG_LEVEL": "WARNING",
        # The benchmark talks plain HTTP to localhost: secure cookies would never be sent back.
        "SESSION_COOKIE_SECURE": "False",
        "CSRF_COOKIE_SECURE": "False",
        "SECURE_SSL_REDIRECT": "False",
    })
    if database_url:
        env["DATABASE_URL"] = database_url
        env["USE_SQLITE"] = "False"
    else:
        env["USE_SQLITE"] = "True"
        env["SQLITE_PATH"] = str(scratch / "bench.sqlite3")
    (scratch / "logs").mkdir(parents=True, exist_ok=True)
    return env


def seed(n_models: int, n_datasets: int) -> dict[str, int]:
    """Runs in this process (Django set up with the benchmark's environment)."""
    from django.contrib.auth import get_user_model
    from django.core.files.uploadedfile import SimpleUploadedFile

    from classification.models import MLModel, TrainingJob
    from dataset_management.models import Dataset
    from dataset_management.services import dataset_create_from_upload

    user = get_user_model().objects.create_user("bench", "bench@example.org", PASSWORD)
    demo = ROOT / "tests" / "fixtures" / "demo_slice.csv"
    if not demo.exists():
        demo = ROOT / "demo_data" / "medlit_challenge.csv"
    real = dataset_create_from_upload(
        owner=user, uploaded_file=SimpleUploadedFile(demo.name, demo.read_bytes()),
        name="Demo slice (real rows)",
    )
    labels = list(real.label_names)
    Dataset.objects.bulk_create([
        Dataset(owner=user, name=f"Dataset {i:03d}", label_names=labels, is_multilabel=True,
                row_count=2000 + i, label_counts={n: 500 for n in labels},
                split_sizes={"train": 1600, "validation": 200, "test": 200},
                original_filename=f"set{i}.csv", file_format="csv")
        for i in range(n_datasets - 1)
    ])
    per_label = {n: {"precision": 0.8, "recall": 0.75, "f1": 0.77, "support": 50} for n in labels}
    metrics = {
        "n": 200, "multi_label": True, "micro_f1": 0.85, "macro_f1": 0.82, "weighted_f1": 0.84,
        "subset_accuracy": 0.7, "hamming_loss": 0.07, "roc_auc_macro": 0.93,
        "per_label": per_label,
        "confusion": {n: [[120, 10], [12, 58]] for n in labels},
        "confident_mistakes": [
            {"index": i, "text": "An abstract about heart and brain " * 10,
             "true_labels": [labels[0]], "predicted_labels": [labels[1]], "label": labels[1],
             "probability": 0.9, "confidence": 0.9} for i in range(20)
        ],
    }
    MLModel.objects.bulk_create([
        MLModel(owner=user, dataset=real, name=f"Model {i:03d}",
                model_type=["tfidf_logreg", "minilm", "pubmedbert"][i % 3],
                status=MLModel.Status.TRAINED, metrics=metrics, label_names=labels,
                is_multilabel=True, parameters={"epochs": 3, "batch_size": 16})
        for i in range(n_models - 1)
    ])
    running = MLModel.objects.create(owner=user, dataset=real, name="Running model",
                                     model_type="pubmedbert", status=MLModel.Status.TRAINING,
                                     label_names=labels, is_multilabel=True)
    job = TrainingJob.objects.create(
        ml_model=running, status=TrainingJob.Status.RUNNING, phase=TrainingJob.Phase.TRAINING,
        total_epochs=3, total_steps=3000, log_tail="\n".join(f"line {i}" for i in range(60)),
    )
    trained = list(MLModel.objects.filter(owner=user, status=MLModel.Status.TRAINED)
                   .order_by("pk").values_list("pk", flat=True))
    return {"job": job.pk, "dataset": real.pk, "model": trained[0], "compare": trained[:8]}


class Writer(threading.Thread):
    """Updates the job row once a second, like the training child's progress writer."""

    def __init__(self, job_id: int, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.job_id, self.stop, self.writes, self.errors = job_id, stop, 0, 0

    def run(self) -> None:
        from django.db import connection
        from django.utils import timezone

        from classification.models import TrainingJob

        history: list[dict] = []
        step = 0
        while not self.stop.is_set():
            step += 10
            history.append({"kind": "loss", "step": step, "epoch": step / 1000,
                            "loss": 1.0 / (1 + step / 500), "learning_rate": 5e-5})
            try:
                TrainingJob.objects.filter(pk=self.job_id).update(
                    current_step=step, progress_percentage=min(99.0, step / 30),
                    current_epoch=step / 1000, heartbeat_at=timezone.now(),
                    progress_at=timezone.now(), last_loss=history[-1]["loss"],
                    metrics_history=history[-2000:], eta_seconds=3000 - step,
                )
                self.writes += 1
            except Exception:  # a locked database must show up as a count, not kill the run
                self.errors += 1
            self.stop.wait(1.0)
        connection.close()


def request(port: int, path: str, cookie: str, *, timeout: float = 10.0,
            accept: str = "application/json") -> tuple[int, float]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    start = time.perf_counter()
    conn.request("GET", path, headers={"Cookie": cookie, "Accept": accept})
    response = conn.getresponse()
    response.read()
    elapsed = time.perf_counter() - start
    conn.close()
    return response.status, elapsed


def login(port: int) -> str:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/accounts/login/")
    response = conn.getresponse()
    body = response.read().decode()
    csrf_cookie = re.search(r"csrftoken=([^;]+)", response.getheader("Set-Cookie", "")).group(1)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', body).group(1)
    conn.request("POST", "/accounts/login/",
                 body=urlencode({"username": "bench", "password": PASSWORD,
                                 "csrfmiddlewaretoken": token}),
                 headers={"Content-Type": "application/x-www-form-urlencoded",
                          "Cookie": f"csrftoken={csrf_cookie}"})
    response = conn.getresponse()
    response.read()
    cookies = response.getheader("Set-Cookie", "")
    session = re.search(r"sessionid=([^;]+)", cookies)
    if response.status != 302 or not session:
        raise SystemExit(f"login failed: {response.status} {cookies}")
    return f"sessionid={session.group(1)}; csrftoken={csrf_cookie}"


def poll(port: int, path: str, cookie: str, *, clients: int, seconds: float,
         interval: float) -> dict[str, float]:
    """`clients` concurrent pollers, each requesting every `interval` s (0 = back to back).

    One asyncio loop, not 50 threads: threads in one Python process queue for the GIL, and on
    a busy 2-core machine that queue, not the server, would dominate the measured tail.
    """
    return asyncio.run(_poll(port, path, cookie, clients, seconds, interval))


async def _poll(port: int, path: str, cookie: str, clients: int, seconds: float,
                interval: float) -> dict[str, float]:
    latencies: list[float] = []
    failures = [0]
    raw = (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: {cookie}\r\n"
           "Accept: application/json\r\nConnection: close\r\n\r\n").encode()
    deadline = time.monotonic() + seconds

    async def one() -> None:
        start = time.perf_counter()
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(raw)
        await writer.drain()
        response = await reader.read()  # the server closes: the whole response is read
        elapsed = time.perf_counter() - start
        writer.close()
        if response.startswith((b"HTTP/1.1 200", b"HTTP/1.0 200")):
            latencies.append(elapsed)
        else:
            failures[0] += 1

    async def client(offset: float) -> None:
        await asyncio.sleep(offset)  # spread the clients over one interval, as real pages are
        while time.monotonic() < deadline:
            started = time.monotonic()
            try:
                await asyncio.wait_for(one(), timeout=10)
            except (TimeoutError, OSError):
                failures[0] += 1
            if interval:
                await asyncio.sleep(max(0.0, interval - (time.monotonic() - started)))

    await asyncio.gather(*(client(i * interval / clients) for i in range(clients)))
    ms = [x * 1000 for x in latencies]
    return {"requests": len(ms), "failures": failures[0],
            "rps": round(len(ms) / seconds, 1),
            "p50_ms": round(percentile(ms, 50), 2), "p95_ms": round(percentile(ms, 95), 2),
            "p99_ms": round(percentile(ms, 99), 2), "max_ms": round(max(ms or [0]), 2)}


DEMO_FULL = ROOT / "demo_data" / "medlit_challenge.csv"


def migrate_and_seed(env: dict[str, str], *, n_models: int, n_datasets: int) -> dict[str, int]:
    """Migrate the scratch database and seed it from this process, set up with `env`."""
    os.environ.update(env)
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
                   cwd=ROOT, env=env, check=True)
    import django

    django.setup()
    return seed(n_models, n_datasets)


def start_server(env: dict[str, str], log: Path) -> tuple[subprocess.Popen, int]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
        cwd=ROOT, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT,
    )
    for _ in range(300):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, port
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"server did not start:\n{log.read_text(errors='replace')[-3000:]}")


def stop_process(proc: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def start_worker(env: dict[str, str], log: Path, *, nice: int = 0) -> subprocess.Popen:
    # The training child inherits the worker's niceness: --worker-nice shows what running
    # training below the web server's priority does to the web's latency.
    proc = subprocess.Popen(
        [*(["nice", "-n", str(nice)] if nice else []), sys.executable, "-m", "celery",
         "-A", "medlitbot_project", "worker", "--pool=solo", "--concurrency=1",
         "--without-gossip", "--without-mingle", "--loglevel=INFO"],
        cwd=ROOT, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if " ready." in log.read_text(errors="replace"):
            return proc
        if proc.poll() is not None:
            raise SystemExit(f"worker exited:\n{log.read_text(errors='replace')[-3000:]}")
        time.sleep(0.3)
    raise SystemExit("worker not ready after 120 s")


def start_training(model_type: str) -> int:
    """A real job on the full demo file; returns its id once it is in its training phase."""
    from django.contrib.auth import get_user_model
    from django.core.files.uploadedfile import SimpleUploadedFile

    from classification import services
    from classification.models import TrainingJob
    from dataset_management.services import dataset_create_from_upload

    owner = get_user_model().objects.get(username="bench")
    dataset = dataset_create_from_upload(
        owner=owner, uploaded_file=SimpleUploadedFile(DEMO_FULL.name, DEMO_FULL.read_bytes()),
        name="Demo (full)",
    )
    job = services.training_job_create(owner=owner, dataset=dataset, model_type=model_type,
                                       name=f"Benchmark {model_type}",
                                       config={"epochs": 3, "batch_size": 16, "max_length": 256})
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        job.refresh_from_db()
        if job.phase == TrainingJob.Phase.TRAINING and job.current_step > 0:
            return job.pk
        if not job.is_active:
            raise SystemExit(f"training ended {job.status} before the benchmark: {job.reason}")
        time.sleep(0.5)
    raise SystemExit("training did not reach its training phase within 300 s")


def job_state(job_id: int) -> dict:
    from classification.models import TrainingJob

    return TrainingJob.objects.filter(pk=job_id).values(
        "status", "phase", "current_step", "total_steps", "progress_percentage").first()


def cancel(job_id: int) -> str:
    from classification import services
    from classification.models import TrainingJob

    job = TrainingJob.objects.get(pk=job_id)
    if job.is_active:
        services.training_job_cancel(job=job)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        job.refresh_from_db()
        if not job.is_active:
            break
        time.sleep(0.5)
    return job.status


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--interval", type=float, default=1.0,
                        help="seconds between one client's polls (the job page uses 1.5)")
    parser.add_argument("--train", default="minilm", help="model type of the real training")
    parser.add_argument("--simulate", action="store_true",
                        help="no worker: a thread writes the job row once a second")
    parser.add_argument("--worker-nice", type=int, default=0,
                        help="run the worker (and so the training) at this niceness; 0 = as "
                        "start_m1.sh runs it")
    parser.add_argument("--redis-db", type=int, default=14)
    parser.add_argument("--database-url", default=None, help="default: a temp SQLite file")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="medlitbot-bench-"))
    env = configure_env(scratch, args.database_url)
    env["REDIS_URL"] = env["CELERY_BROKER_URL"] = f"redis://127.0.0.1:6379/{args.redis_db}"
    ids = migrate_and_seed(env, n_models=100, n_datasets=100)
    server = worker = None
    stop = threading.Event()
    writer: Writer | None = None
    try:
        if args.simulate:
            job_id = ids["job"]
            writer = Writer(job_id, stop)
            writer.start()
        else:
            import redis

            redis.Redis.from_url(env["REDIS_URL"]).flushdb()  # stale messages name other DBs
            worker = start_worker(env, scratch / "worker.log", nice=args.worker_nice)
            job_id = start_training(args.train)
        before = job_state(job_id)
        server, port = start_server(env, scratch / "server.log")
        cookie = login(port)
        path = f"/jobs/{job_id}/progress/"
        request(port, path, cookie)
        paced = poll(port, path, cookie, clients=args.clients, seconds=args.seconds,
                     interval=args.interval)
        stress = poll(port, path, cookie, clients=args.clients,
                      seconds=min(10.0, args.seconds), interval=0.0)
        after = job_state(job_id)
        load = os.getloadavg()
    finally:
        stop.set()
        final = cancel(job_id) if worker is not None and "job_id" in locals() else "-"
        for proc in (server, worker):
            if proc is not None:
                stop_process(proc, signal.SIGTERM)

    db = "sqlite" if not args.database_url else args.database_url.split(":", 1)[0]
    print(f"Server: manage.py runserver --noreload (threaded), DEBUG=False, {db}, "
          f"{os.cpu_count()} CPUs; seeded 100 models and 100 datasets")
    # Other processes on the machine show up in the tail; say how busy it was.
    print(f"Load average (1, 5, 15 min) at the end: {', '.join(f'{x:.2f}' for x in load)}")
    if writer is not None:
        print(f"Simulated training: the job row was written {writer.writes} times "
              f"(errors {writer.errors})")
    else:
        print(f"Real training: {args.train} (worker niceness {args.worker_nice}), job {job_id}, "
              f"step {before['current_step']} -> "
              f"{after['current_step']} of {after['total_steps']} during the measurement "
              f"({after['status']}, {after['phase']}); cancelled afterwards -> {final}")
    print(f"\nProgress endpoint, {args.clients} clients each polling every {args.interval:g} s "
          f"for {args.seconds:g} s:")
    print(f"  {paced['requests']} requests ({paced['rps']}/s), failures {paced['failures']}, "
          f"p50 {paced['p50_ms']} ms, p95 {paced['p95_ms']} ms, p99 {paced['p99_ms']} ms, "
          f"max {paced['max_ms']} ms  -> target p99 < 50 ms: "
          f"{'PASS' if paced['p99_ms'] < 50 else 'FAIL'}")
    print(f"Stress (same {args.clients} clients back to back, no pause): {stress['rps']}/s, "
          f"p50 {stress['p50_ms']} ms, p99 {stress['p99_ms']} ms, failures {stress['failures']}")
    if not args.keep:
        shutil.rmtree(scratch, ignore_errors=True)
    else:
        print(f"scratch kept at {scratch}")
    print(json.dumps({
        "progress_paced": paced, "progress_stress": stress, "clients": args.clients,
        "interval_s": args.interval, "database": db,
        "training": "simulated" if writer else args.train,
        "steps_during_measurement": None if writer else
        after["current_step"] - before["current_step"],
        "target_progress_p99_ms": 50, "progress_p99_pass": paced["p99_ms"] < 50,
        "worker_nice": args.worker_nice, "loadavg": [round(x, 2) for x in load],
    }))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
