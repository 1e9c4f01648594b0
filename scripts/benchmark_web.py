#!/usr/bin/env python
"""Web benchmark against the production server: progress latency while a training and a batch run.

It builds a throw-away database (SQLite in a temp folder unless --database-url is given), seeds
a user with 100 datasets and 100 models, and starts the processes the way start_m1.sh does:
gunicorn with medlitbot_project/gunicorn_conf.py (DEBUG=False), a solo training worker and a
threaded inference worker. Then:
  1. batch throughput: a TF-IDF model is trained, and --batch-rows demo-like abstracts are
     classified as a batch job on the inference worker (abstracts/s, end to end); with
     --minilm-batch-rows, the same for a MiniLM fine-tuned briefly on a slice;
  2. progress latency: a real training (--train, default minilm on the demo file) and a
     --batch-rows TF-IDF batch run together while 50 clients poll the job's progress endpoint
     once a second, then back to back (a stress figure). Twice, in the same run: first with
     the inference worker at the web's own priority (the baseline: how start_m1.sh ran it
     before issue 37), then with its every thread reniced to --inference-nice (how start_m1.sh
     runs it now), each window with TF-IDF batches back to back beside the training. The job
     is cancelled at the end;
  3. upload memory: a --upload-mb upload streamed to /datasets/upload/ and /api/datasets/,
     with and without Content-Length, while the web processes' RSS is sampled.
--simulate replaces the real training with a thread that writes the job row once a second.

    .venv/bin/python scripts/benchmark_web.py [--clients 50] [--seconds 20] [--train minilm]

Needs Redis; the workers use Redis DB --redis-db (default 14), which is flushed first. Prints
the figures; the last line is JSON. Target: progress p99 < 100 ms. Page render times:
scripts/benchmark_pages.py.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
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
TARGET_P99_MS = 100  # issue 37: with a training and a 10,000-abstract batch beside the polls


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
    from projects.services import project_personal

    user = get_user_model().objects.create_user("bench", "bench@example.org", PASSWORD)
    project = project_personal(user=user)
    demo = ROOT / "tests" / "fixtures" / "demo_slice.csv"
    if not demo.exists():
        demo = ROOT / "demo_data" / "medlit_challenge.csv"
    real = dataset_create_from_upload(
        owner=user, uploaded_file=SimpleUploadedFile(demo.name, demo.read_bytes()),
        name="Demo slice (real rows)",
    )
    labels = list(real.label_names)
    Dataset.objects.bulk_create([
        Dataset(owner=user, project=project, name=f"Dataset {i:03d}", label_names=labels,
                is_multilabel=True, row_count=2000 + i, label_counts={n: 500 for n in labels},
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
        MLModel(owner=user, project=project, dataset=real, name=f"Model {i:03d}",
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
    """gunicorn exactly as start_m1.sh starts it, on a free port."""
    port = free_port()
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "gunicorn"), "-c",
         "python:medlitbot_project.gunicorn_conf", "medlitbot_project.wsgi"],
        cwd=ROOT, env={**env, "WEB_BIND": f"127.0.0.1:{port}",
                       "WEB_ERROR_LOG": str(log), "WEB_ACCESS_LOG": str(log) + ".access"},
        stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
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


def renice(pid: int, nice: int) -> None:
    """Every thread of `pid` and of its children to `nice`: on Linux niceness is per thread,
    and a running pool's threads never re-read their process's."""
    import psutil

    for proc in [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]:
        for thread in proc.threads():
            with contextlib.suppress(OSError):  # a thread may end meanwhile
                os.setpriority(os.PRIO_PROCESS, thread.id, nice)


def start_worker(env: dict[str, str], log: Path, *, nice: int = 0,
                 kind: str = "training") -> subprocess.Popen:
    # The training child inherits the worker's niceness: --worker-nice shows what running
    # training below the web server's priority does to the web's latency.
    prefix = env.get("CELERY_QUEUE_PREFIX", "")
    pool = (["--pool=solo", "--concurrency=1", f"--queues={prefix}training"]
            if kind == "training" else
            ["--pool=threads", "--concurrency=2", f"--queues={prefix}inference,{prefix}default"])
    proc = subprocess.Popen(
        [*(["nice", "-n", str(nice)] if nice else []), sys.executable, "-m", "celery",
         "-A", "medlitbot_project", "worker", *pool, f"--hostname={kind}@%h",
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

    from classification import services
    from classification.models import TrainingJob

    owner = get_user_model().objects.get(username="bench")
    dataset = demo_dataset()
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


def demo_like_csv(path: Path, rows: int) -> Path:
    """`rows` abstracts cycled from the demo file, each with an id, as a PubMed export has."""
    import csv

    # The demo file is the challenge's own export: semicolon-separated, with a BOM.
    with DEMO_FULL.open(encoding="utf-8-sig", newline="") as handle:
        source = list(csv.DictReader(handle, delimiter=";"))
    if not source or not source[0].get("abstract"):
        raise SystemExit(f"{DEMO_FULL} has no abstract column")
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["pmid", "title", "abstract"])
        for i in range(rows):
            row = source[i % len(source)]
            writer.writerow([30000000 + i, row.get("title", ""), row.get("abstract", "")])
    return path


def demo_dataset(rows: int | None = None):
    """The demo file (or its first `rows` rows) imported once; an upload twice is refused."""
    from django.contrib.auth import get_user_model
    from django.core.files.uploadedfile import SimpleUploadedFile

    from dataset_management.models import Dataset
    from dataset_management.services import dataset_create_from_upload

    name = f"Demo ({rows or 'full'})"
    owner = get_user_model().objects.get(username="bench")
    if found := Dataset.objects.filter(owner=owner, name=name).first():
        return found
    data = DEMO_FULL.read_bytes()
    if rows:
        data = b"\n".join(data.splitlines()[: rows + 1]) + b"\n"
    return dataset_create_from_upload(
        owner=owner, uploaded_file=SimpleUploadedFile(DEMO_FULL.name, data), name=name)


def train_and_wait(model_type: str, config: dict, *, rows: int | None = None) -> int:
    """A model trained by the training worker; returns its id."""
    from django.contrib.auth import get_user_model

    from classification import services

    owner = get_user_model().objects.get(username="bench")
    dataset = demo_dataset(rows)
    job = services.training_job_create(owner=owner, dataset=dataset, model_type=model_type,
                                       name=f"Batch {model_type}", config=config)
    deadline = time.monotonic() + 1800
    while time.monotonic() < deadline:
        job.refresh_from_db()
        if not job.is_active:
            if job.status != "completed":
                raise SystemExit(f"{model_type} training ended {job.status}: {job.reason}")
            return job.ml_model_id
        time.sleep(1)
    raise SystemExit(f"{model_type} training did not finish within 30 min")


def batch_submit(model_id: int, csv_path: Path):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from classification.batches import services as batch_services
    from classification.models import MLModel

    model = MLModel.objects.get(pk=model_id)
    upload = SimpleUploadedFile(csv_path.name, csv_path.read_bytes(), "text/csv")
    return batch_services.batch_job_create(owner=model.owner, ml_model=model,
                                           uploaded_file=upload)


class BatchFeeder(threading.Thread):
    """Batches of one file, back to back, so one is running for the whole polling window."""

    def __init__(self, model_id: int, csv_path: Path) -> None:
        super().__init__(daemon=True)
        self.model_id, self.csv_path = model_id, csv_path
        self.stopping = threading.Event()
        self.rows = 0
        self.started = time.monotonic()

    def run(self) -> None:
        from django.db import connection

        from classification.batches import services as batch_services

        try:
            while not self.stopping.is_set():
                batch = batch_submit(self.model_id, self.csv_path)
                while batch.is_active and not self.stopping.wait(0.2):
                    batch.refresh_from_db()
                batch.refresh_from_db()
                self.rows += batch.processed
                if batch.is_active:  # so the next window starts with no batch of this one's
                    batch_services.batch_job_cancel(batch=batch, actor=batch.owner)
        finally:
            connection.close()

    def finish(self) -> dict[str, float]:
        """Stop feeding; the rows classified during the window (the last batch's so far)."""
        seconds = time.monotonic() - self.started
        self.stopping.set()
        self.join(timeout=60)
        return {"rows": self.rows, "seconds": round(seconds, 1),
                "abstracts_per_s": round(self.rows / max(seconds, 0.001), 1)}


def batch_wait(batch, timeout: float = 3600) -> dict[str, float]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        batch.refresh_from_db()
        if batch.status not in ("queued", "running"):
            break
        time.sleep(0.5)
    if batch.status != "completed":
        raise SystemExit(f"batch ended {batch.status}: {batch.reason}")
    if batch.skipped:  # a throughput of skipped rows would measure nothing
        raise SystemExit(f"batch skipped {batch.skipped} of {batch.total} articles")
    seconds = (batch.finished_at - batch.created_at).total_seconds()
    return {"rows": batch.total, "seconds": round(seconds, 1),
            "abstracts_per_s": round(batch.total / seconds, 1)}


def upload_peak_rss(port: int, cookie: str, server: subprocess.Popen, *, megabytes: int,
                    path: str, token: str | None, chunked: bool) -> dict[str, float]:
    """Stream `megabytes` of multipart body to `path`; sample the web processes' RSS meanwhile."""
    import psutil

    def rss() -> int:
        procs = [psutil.Process(server.pid), *psutil.Process(server.pid).children()]
        return sum(p.memory_info().rss for p in procs if p.is_running())

    boundary = "medlitbotbench"
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; "
            f'filename="huge.csv"\r\nContent-Type: text/csv\r\n\r\ntitle,abstract\r\n').encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    chunk = b"Heart failure,An abstract about the heart and the brain.\r\n" * 16384
    total = len(head) + len(tail) + megabytes * 2**20
    headers = {"Content-Type": f"multipart/form-data; boundary={boundary}", "Cookie": cookie}
    if token:
        headers["Authorization"] = f"Token {token}"
    if chunked:
        headers["Transfer-Encoding"] = "chunked"
    else:
        headers["Content-Length"] = str(total)
    before, peak, stop = rss(), [0], threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], rss())
            stop.wait(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    start = time.perf_counter()
    status, sent = 0, 0
    try:
        conn.putrequest("POST", path)
        for key, value in headers.items():
            conn.putheader(key, value)
        conn.endheaders()

        def send(data: bytes) -> None:
            conn.send(b"%x\r\n%s\r\n" % (len(data), data) if chunked else data)

        send(head)
        sent = len(head)
        while sent < total - len(tail):
            piece = chunk[: total - len(tail) - sent]
            send(piece)
            sent += len(piece)
        send(tail)
        if chunked:
            conn.send(b"0\r\n\r\n")
        status = conn.getresponse().status
    except (BrokenPipeError, ConnectionResetError):
        # The server answered and closed while the body was still arriving: read the answer.
        try:
            status = conn.getresponse().status
        except Exception:
            status = -1
    finally:
        conn.close()
        stop.set()
        sampler.join()
    return {"status": status, "sent_mb": round(sent / 2**20, 1),
            "seconds": round(time.perf_counter() - start, 2),
            "rss_before_mb": round(before / 2**20, 1), "rss_peak_mb": round(peak[0] / 2**20, 1),
            "rss_growth_mb": round((peak[0] - before) / 2**20, 1)}


def api_token() -> str:
    from django.contrib.auth import get_user_model

    from api.tokens import token_create

    bench = get_user_model().objects.get(username="bench")
    return token_create(user=bench, name="benchmark_web")[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--interval", type=float, default=1.0,
                        help="seconds between one client's polls (the job page uses 1.5)")
    parser.add_argument("--train", default="minilm", help="model type of the real training")
    parser.add_argument("--simulate", action="store_true",
                        help="no training worker: a thread writes the job row once a second")
    parser.add_argument("--batch-rows", type=int, default=10000,
                        help="abstracts in the TF-IDF batch (0: no batch)")
    parser.add_argument("--minilm-batch-rows", type=int, default=0,
                        help="abstracts for a MiniLM batch-throughput figure (0: skip)")
    parser.add_argument("--upload-mb", type=int, default=1024,
                        help="size of the oversized upload (0: skip)")
    parser.add_argument("--worker-nice", type=int, default=0,
                        help="run the training worker at this niceness; 0 = as start_m1.sh does")
    parser.add_argument("--inference-nice", type=int, default=10,
                        help="the inference worker's niceness after the baseline window "
                             "(start_m1.sh's INFERENCE_NICE)")
    parser.add_argument("--no-baseline", action="store_true",
                        help="skip the window with the inference worker at the web's priority")
    parser.add_argument("--redis-db", type=int, default=14)
    parser.add_argument("--database-url", default=None, help="default: a temp SQLite file")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="medlitbot-bench-"))
    env = configure_env(scratch, args.database_url)
    env["REDIS_URL"] = env["CELERY_BROKER_URL"] = f"redis://127.0.0.1:6379/{args.redis_db}"
    env["CELERY_QUEUE_PREFIX"] = "bench-"
    ids = migrate_and_seed(env, n_models=100, n_datasets=100)
    procs: list[subprocess.Popen] = []
    stop = threading.Event()
    writer: Writer | None = None
    throughput: dict[str, dict] = {}
    uploads: dict[str, dict] = {}
    job_id = None
    try:
        import redis

        redis.Redis.from_url(env["REDIS_URL"]).flushdb()  # stale messages name other DBs
        inference = start_worker(env, scratch / "inference.log", kind="inference",
                                 nice=0 if not args.no_baseline else args.inference_nice)
        procs.append(inference)
        if not args.simulate or args.batch_rows:
            procs.append(start_worker(env, scratch / "training.log", nice=args.worker_nice))
        server, port = start_server(env, scratch / "server.log")
        procs.append(server)
        batch_file = demo_like_csv(scratch / "batch.csv", args.batch_rows or 1)
        tfidf_id = None
        if args.batch_rows:
            tfidf_id = train_and_wait("tfidf_logreg", {})
            throughput["tfidf_logreg"] = batch_wait(batch_submit(tfidf_id, batch_file))
        if args.minilm_batch_rows:
            minilm_file = demo_like_csv(scratch / "batch-minilm.csv", args.minilm_batch_rows)
            minilm_id = train_and_wait("minilm", {"epochs": 1, "batch_size": 16,
                                                  "max_length": 256}, rows=200)
            throughput["minilm"] = batch_wait(batch_submit(minilm_id, minilm_file))
        if args.simulate:
            job_id = ids["job"]
            writer = Writer(job_id, stop)
            writer.start()
        else:
            job_id = start_training(args.train)
        cookie = login(port)
        path = f"/jobs/{job_id}/progress/"
        request(port, path, cookie)

        def window(label: str) -> dict:
            """One paced polling window with batches back to back beside the training."""
            feeder = BatchFeeder(tfidf_id, batch_file) if tfidf_id else None
            if feeder is not None:
                feeder.start()
            state = job_state(job_id)
            paced = poll(port, path, cookie, clients=args.clients, seconds=args.seconds,
                         interval=args.interval)
            end = job_state(job_id)
            fed = feeder.finish() if feeder is not None else {}
            return {"label": label, "paced": paced, "steps": end["current_step"]
                    - state["current_step"], "job_status": end["status"], "batches": fed,
                    "loadavg": [round(x, 2) for x in os.getloadavg()]}

        before = job_state(job_id)
        windows = []
        if not args.no_baseline:
            windows.append(window("inference worker at nice 0 (baseline)"))
            renice(inference.pid, args.inference_nice)
        windows.append(window(f"inference worker at nice {args.inference_nice}"))
        stress = poll(port, path, cookie, clients=args.clients,
                      seconds=min(10.0, args.seconds), interval=0.0)
        after = job_state(job_id)
        load = os.getloadavg()
        paced = windows[-1]["paced"]
        if args.upload_mb:
            token = api_token()
            for name, target, auth, chunked in (
                ("web", "/datasets/upload/", None, False),
                ("web_chunked", "/datasets/upload/", None, True),
                ("api", "/api/datasets/", token, False),
                ("api_chunked", "/api/datasets/", token, True),
            ):
                uploads[name] = upload_peak_rss(port, cookie, server, megabytes=args.upload_mb,
                                                path=target, token=auth, chunked=chunked)
    finally:
        stop.set()
        final = cancel(job_id) if job_id and not args.simulate else "-"
        for proc in procs:
            stop_process(proc, signal.SIGTERM)

    db = "sqlite" if not args.database_url else args.database_url.split(":", 1)[0]
    print(f"Server: gunicorn (medlitbot_project/gunicorn_conf.py), DEBUG=False, {db}, "
          f"{os.cpu_count()} CPUs; seeded 100 models and 100 datasets")
    # Other processes on the machine show up in the tail; say how busy it was.
    print(f"Load average (1, 5, 15 min) after polling: {', '.join(f'{x:.2f}' for x in load)}")
    if writer is not None:
        print(f"Simulated training: the job row was written {writer.writes} times "
              f"(errors {writer.errors})")
    else:
        print(f"Real training: {args.train} (worker niceness {args.worker_nice}), job {job_id}, "
              f"step {before['current_step']} -> "
              f"{after['current_step']} of {after['total_steps']} during the measurement "
              f"({after['status']}, {after['phase']}); cancelled afterwards -> {final}")
    for name, figures in throughput.items():
        print(f"Batch {name}: {figures['rows']} abstracts in {figures['seconds']} s = "
              f"{figures['abstracts_per_s']} abstracts/s (queued to CSV written)")
    print(f"\nProgress endpoint, {args.clients} clients each polling every {args.interval:g} s "
          f"for {args.seconds:g} s (training and a {args.batch_rows}-abstract batch running):")
    for item in windows:
        figures = item["paced"]
        print(f"  {item['label']}: {figures['requests']} requests ({figures['rps']}/s), "
              f"failures {figures['failures']}, p50 {figures['p50_ms']} ms, "
              f"p95 {figures['p95_ms']} ms, p99 {figures['p99_ms']} ms, "
              f"max {figures['max_ms']} ms; training {item['steps']} steps, batches "
              f"{item['batches'].get('rows', 0)} rows at "
              f"{item['batches'].get('abstracts_per_s', 0)}/s; "
              f"load {item['loadavg'][0]}  -> p99 < {TARGET_P99_MS} ms: "
              f"{'PASS' if figures['p99_ms'] < TARGET_P99_MS else 'FAIL'}")
    if len(windows) == 2:
        ratio = windows[0]["paced"]["p99_ms"] / max(0.01, paced["p99_ms"])
        print(f"  p99 baseline / now: {ratio:.1f}x")
    print(f"Stress (same {args.clients} clients back to back, no pause): {stress['rps']}/s, "
          f"p50 {stress['p50_ms']} ms, p99 {stress['p99_ms']} ms, failures {stress['failures']}")
    for name, figures in uploads.items():
        print(f"Upload {args.upload_mb} MB to {name}: HTTP {figures['status']} after "
              f"{figures['sent_mb']} MB sent, {figures['seconds']} s; web RSS "
              f"{figures['rss_before_mb']} -> peak {figures['rss_peak_mb']} MB "
              f"(+{figures['rss_growth_mb']} MB)")
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
        "batch_throughput": throughput, "uploads": uploads,
        "windows": windows,
        "target_progress_p99_ms": TARGET_P99_MS,
        "progress_p99_pass": paced["p99_ms"] < TARGET_P99_MS,
        "worker_nice": args.worker_nice, "inference_nice": args.inference_nice,
        "loadavg": [round(x, 2) for x in load],
    }))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
