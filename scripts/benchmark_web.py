#!/usr/bin/env python
"""Web benchmark: job-progress polling latency under 50 concurrent pollers, and page render times
with 100 models and 100 datasets present.

It builds a throw-away database (SQLite in a temp folder unless --database-url is given), seeds a
user with 100 datasets, 100 models and one running job, starts a real server process
(`manage.py runserver --noreload`, threaded, DEBUG=False), and while a writer thread updates the
job row once a second (as a training child does), runs 50 polling clients for --seconds.

    .venv/bin/python scripts/benchmark_web.py [--clients 50] [--seconds 20] [--interval 1.0]

Prints the figures; the last line is JSON. Targets: progress p99 < 50 ms, pages < 200 ms.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import secrets
import shutil
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
    trained = MLModel.objects.filter(owner=user, status=MLModel.Status.TRAINED).first()
    return {"job": job.pk, "dataset": real.pk, "model": trained.pk}


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


def request(port: int, path: str, cookie: str, *, timeout: float = 10.0) -> tuple[int, float]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    start = time.perf_counter()
    conn.request("GET", path, headers={"Cookie": cookie, "Accept": "application/json"})
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
    """`clients` threads, each requesting every `interval` s (0 = back to back)."""
    latencies: list[float] = []
    failures = [0]
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def client(offset: float) -> None:
        time.sleep(offset)  # spread the clients over one interval, as real pages are
        mine: list[float] = []
        while time.monotonic() < deadline:
            started = time.monotonic()
            try:
                status, elapsed = request(port, path, cookie)
                if status == 200:
                    mine.append(elapsed)
                else:
                    failures[0] += 1
            except OSError:
                failures[0] += 1
            if interval:
                time.sleep(max(0.0, interval - (time.monotonic() - started)))
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client, args=(i * interval / clients,))
               for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ms = [x * 1000 for x in latencies]
    return {"requests": len(ms), "failures": failures[0],
            "rps": round(len(ms) / seconds, 1),
            "p50_ms": round(percentile(ms, 50), 2), "p95_ms": round(percentile(ms, 95), 2),
            "p99_ms": round(percentile(ms, 99), 2), "max_ms": round(max(ms or [0]), 2)}


def pages(port: int, cookie: str, ids: dict[str, int], repeat: int) -> dict[str, dict]:
    urls = {
        "dashboard": "/",
        "datasets": "/datasets/",
        "dataset_detail": f"/datasets/{ids['dataset']}/",
        "models": "/models/",
        "model_detail": f"/models/{ids['model']}/",
        "model_new": "/models/new/",
        "job_detail": f"/jobs/{ids['job']}/",
        "classify": "/classify/",
        "compare_8": "/models/compare/?" + "&".join(
            f"ids={ids['model'] + i}" for i in range(8)),
        "api_models": "/api/models/",
        "api_datasets": "/api/datasets/",
    }
    out = {}
    for name, url in urls.items():
        status, _ = request(port, url, cookie)  # warm caches and imports once
        times = []
        for _ in range(repeat):
            status, elapsed = request(port, url, cookie)
            times.append(elapsed * 1000)
        out[name] = {"status": status, "p50_ms": round(percentile(times, 50), 1),
                     "p95_ms": round(percentile(times, 95), 1),
                     "max_ms": round(max(times), 1)}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--interval", type=float, default=1.0,
                        help="seconds between one client's polls (the job page uses 1.5)")
    parser.add_argument("--models", type=int, default=100)
    parser.add_argument("--datasets", type=int, default=100)
    parser.add_argument("--page-repeat", type=int, default=20)
    parser.add_argument("--database-url", default=None, help="default: a temp SQLite file")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="medlitbot-bench-"))
    env = configure_env(scratch, args.database_url)
    os.environ.update(env)
    sys.path.insert(0, str(ROOT))
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
                   cwd=ROOT, env=env, check=True)
    import django

    django.setup()
    ids = seed(args.models, args.datasets)
    port = free_port()
    server_log = (scratch / "server.log").open("wb")
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
        cwd=ROOT, env=env, stdout=server_log, stderr=subprocess.STDOUT,
    )
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        cookie = login(port)
        progress_path = f"/jobs/{ids['job']}/progress/"
        request(port, progress_path, cookie)

        stop = threading.Event()
        writer = Writer(ids["job"], stop)
        writer.start()
        paced = poll(port, progress_path, cookie, clients=args.clients, seconds=args.seconds,
                     interval=args.interval)
        stress = poll(port, progress_path, cookie, clients=args.clients,
                      seconds=min(10.0, args.seconds), interval=0.0)
        stop.set()
        writer.join()
        page_times = pages(port, cookie, ids, args.page_repeat)
    finally:
        server.terminate()
        server.wait(timeout=20)
        server_log.close()

    db = "sqlite" if not args.database_url else args.database_url.split(":", 1)[0]
    print(f"Server: manage.py runserver --noreload (threaded), DEBUG=False, {db}, "
          f"{os.cpu_count()} CPUs")
    print(f"Seeded: {args.models} models, {args.datasets} datasets, 1 running job; writer "
          f"updated the job row {writer.writes} times (errors {writer.errors})")
    print(f"\nProgress endpoint, {args.clients} clients each polling every {args.interval:g} s "
          f"for {args.seconds:g} s:")
    print(f"  {paced['requests']} requests ({paced['rps']}/s), failures {paced['failures']}, "
          f"p50 {paced['p50_ms']} ms, p95 {paced['p95_ms']} ms, p99 {paced['p99_ms']} ms, "
          f"max {paced['max_ms']} ms  -> target p99 < 50 ms: "
          f"{'PASS' if paced['p99_ms'] < 50 else 'FAIL'}")
    print(f"Stress (same {args.clients} clients back to back, no pause): {stress['rps']}/s, "
          f"p50 {stress['p50_ms']} ms, p99 {stress['p99_ms']} ms, failures {stress['failures']}")
    print(f"\nPage render (median of {args.page_repeat}, server + localhost round trip):")
    for name, t in page_times.items():
        flag = "ok" if t["p50_ms"] < 200 and t["status"] == 200 else "SLOW/ERR"
        print(f"  {name:<15} HTTP {t['status']}  p50 {t['p50_ms']:>7} ms  p95 {t['p95_ms']:>7} ms"
              f"  {flag}")
    if not args.keep:
        shutil.rmtree(scratch, ignore_errors=True)
    else:
        print(f"scratch kept at {scratch}")
    result = {
        "progress_paced": paced, "progress_stress": stress, "pages": page_times,
        "clients": args.clients, "interval_s": args.interval, "database": db,
        "target_progress_p99_ms": 50, "target_page_ms": 200,
        "progress_p99_pass": paced["p99_ms"] < 50,
        "pages_pass": all(t["p50_ms"] < 200 and t["status"] == 200 for t in page_times.values()),
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
