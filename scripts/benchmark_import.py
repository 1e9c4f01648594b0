"""A 250 MB CSV imported the way a person imports it: sent to the real web server (gunicorn), read
by a real Celery worker on the default queue. Prints the time, rows/s, the worker's peak memory and
the web's latency while it runs, each beside its baseline from the same run.

    .venv/bin/python scripts/benchmark_import.py [--size-mb 250] [--keep]

Baselines: the same file through `manage.py import_dataset` in a process of its own (the
in-process import, the same code: time and peak RSS, from os.wait4), the worker's RSS before
the import, and the web's latency on the same two requests before the upload. Everything lives
in a temp dir (its own SQLite database and MEDIA_ROOT, queues under a prefix of its own on the
Redis of REDIS_URL, default DB 9). Targets (issue 27): worker peak < 600 MB, web < 1 s. Last
line: JSON.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil
import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scripts.benchmark_ingest import make_csv  # noqa: E402


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def tree_rss(pid: int) -> int:
    """The process and its children, as a worker's memory counts for the machine."""
    process = psutil.Process(pid)
    total = 0
    for each in (process, *process.children(recursive=True)):
        with contextlib.suppress(psutil.Error):  # a child that just ended
            total += each.memory_info().rss
    return total


class Probe(threading.Thread):
    """GET /healthz and a database-backed API read every 0.1 s; every latency kept."""

    def __init__(self, base: str, key: str, path: str) -> None:
        super().__init__(daemon=True)
        self.base, self.path = base, path
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Token {key}"
        self.latencies: list[float] = []
        self.halt = threading.Event()

    def run(self) -> None:
        while not self.halt.is_set():
            for path in ("/healthz", self.path):
                started = time.perf_counter()
                answer = self.session.get(self.base + path, timeout=30)
                answer.raise_for_status()
                self.latencies.append(time.perf_counter() - started)
            time.sleep(0.1)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def probe_for(base: str, key: str, path: str, seconds: float) -> list[float]:
    probe = Probe(base, key, path)
    probe.start()
    time.sleep(seconds)
    probe.halt.set()
    probe.join()
    return probe.latencies


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mb", type=int, default=250)
    parser.add_argument("--keep", action="store_true", help="keep the temp dir")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="medlitbot-import-bench-"))
    port = free_port()
    env = dict(
        os.environ, DATABASE_URL="", USE_SQLITE="True", SQLITE_PATH=str(tmp / "db.sqlite3"),
        MEDIA_ROOT=str(tmp / "media"), LOG_DIR=str(tmp / "logs"),
        DJANGO_SETTINGS_MODULE="medlitbot_project.settings", DEBUG="False",
        SECRET_KEY="bench-" + os.urandom(16).hex(), LOG_LEVEL="WARNING",
        MAX_UPLOAD_SIZE_MB=str(args.size_mb + 10),
        REDIS_URL=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/9"),
        CELERY_QUEUE_PREFIX=f"bench{os.getpid()}-", WEB_BIND=f"127.0.0.1:{port}",
        WEB_WORKERS="2", WEB_THREADS="8", CONN_MAX_AGE="0",
    )
    env.pop("CELERY_BROKER_URL", None)
    (tmp / "logs").mkdir()
    manage = [sys.executable, str(ROOT / "manage.py")]
    procs: list[subprocess.Popen] = []
    try:
        csv_path = tmp / "big.csv"
        rows = make_csv(csv_path, args.size_mb)
        size = csv_path.stat().st_size
        print(f"generated {size / 2**20:.1f} MB, {rows:,} rows")
        subprocess.run([*manage, "migrate", "-v0"], cwd=ROOT, env=env, check=True)
        key = subprocess.run([*manage, "shell", "-c", (
            "from django.contrib.auth import get_user_model; from api.tokens import token_create;"
            "u = get_user_model().objects.create_user('bench');"
            "print(token_create(user=u, name='bench')[1])")],
            cwd=ROOT, env=env, check=True, capture_output=True, text=True).stdout.split()[-1]

        # Baseline: the in-process import of the same file, in a process of its own.
        started = time.perf_counter()
        cli = subprocess.Popen([*manage, "import_dataset", str(csv_path), "--name", "CLI",
                                "--owner", "bench"], cwd=ROOT, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(cli.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit("the in-process import failed")
        cli_seconds, cli_peak = time.perf_counter() - started, usage.ru_maxrss / 1024
        print(f"in-process import_dataset: {cli_seconds:.1f} s, peak {cli_peak:.0f} MB")
        subprocess.run([*manage, "shell", "-c",
                        "from dataset_management.models import Dataset;"
                        "from dataset_management.services import dataset_delete;"
                        "[dataset_delete(dataset=d) for d in Dataset.objects.all()]"],
                       cwd=ROOT, env=env, check=True)  # the same bytes may be uploaded again

        web = subprocess.Popen([str(Path(sys.executable).parent / "gunicorn"), "-c",
                                "python:medlitbot_project.gunicorn_conf",
                                "medlitbot_project.wsgi"], cwd=ROOT, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(web)
        worker = subprocess.Popen([sys.executable, "-m", "celery", "-A", "medlitbot_project",
                                   "worker", "--pool=threads", "--concurrency=2",
                                   f"--queues={env['CELERY_QUEUE_PREFIX']}default",
                                   "--without-gossip", "--without-mingle", "--loglevel=WARNING",
                                   f"--hostname=bench{os.getpid()}@%h"],
                                  cwd=ROOT, env=env, stdout=(tmp / "logs" / "worker.log").open(
                                      "wb"), stderr=subprocess.STDOUT)
        procs.append(worker)
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        while True:
            try:
                if requests.get(base + "/healthz", timeout=1).status_code == 200:
                    break
            except requests.RequestException:
                pass
            if time.monotonic() > deadline:
                raise SystemExit("gunicorn did not start")
            time.sleep(0.3)
        time.sleep(5)  # the worker's own start
        idle_rss = tree_rss(worker.pid)
        idle = probe_for(base, key, "/api/datasets/", 5.0)

        probe = Probe(base, key, "/api/datasets/")
        probe.start()
        started = time.perf_counter()
        with csv_path.open("rb") as handle:
            answer = requests.post(base + "/api/datasets/", files={"file": handle},
                                   data={"name": "Benchmark"}, timeout=300,
                                   headers={"Authorization": f"Token {key}"})
        accepted = time.perf_counter() - started
        if answer.status_code != 202:
            raise SystemExit(f"upload answered {answer.status_code}: {answer.text[:300]}")
        follow = base + answer.json()["url"]
        probe.path = answer.json()["url"]
        peak = idle_rss
        while True:
            peak = max(peak, tree_rss(worker.pid))
            state = requests.get(follow, timeout=30,
                                 headers={"Authorization": f"Token {key}"}).json()
            if not state["is_active"]:
                break
            time.sleep(0.1)
        seconds = time.perf_counter() - started
        probe.halt.set()
        probe.join()
        if state["status"] != "completed":
            raise SystemExit(f"the import ended {state['status']}: {state['reason']}")
        busy = probe.latencies
        result = {
            "file_mb": round(size / 2**20, 1), "rows": rows,
            "seconds": round(seconds, 1), "upload_answered_after_s": round(accepted, 1),
            "rows_per_s": round(rows / seconds),
            "cli_seconds": round(cli_seconds, 1), "time_vs_cli": round(seconds / cli_seconds, 2),
            "worker_peak_mb": round(peak / 2**20), "worker_idle_mb": round(idle_rss / 2**20),
            "cli_peak_mb": round(cli_peak),
            "web_p99_ms": round(1000 * percentile(busy, 0.99)),
            "web_max_ms": round(1000 * max(busy)),
            "web_idle_p99_ms": round(1000 * percentile(idle, 0.99)),
            "web_requests": len(busy),
        }
        result["web_p99_vs_idle"] = round(result["web_p99_ms"] / max(1, result["web_idle_p99_ms"]),
                                          1)
        print(f"web import: {seconds:.1f} s ({rows / seconds:,.0f} rows/s; 202 after "
              f"{accepted:.1f} s; {seconds / cli_seconds:.2f}x the in-process import)")
        print(f"worker peak {peak / 2**20:.0f} MB (idle {idle_rss / 2**20:.0f} MB; in-process "
              f"import {cli_peak:.0f} MB); target < 600 MB")
        print(f"web p99 {result['web_p99_ms']} ms, max {result['web_max_ms']} ms over "
              f"{len(busy)} requests (idle p99 {result['web_idle_p99_ms']} ms); target < 1000 ms")
        print(json.dumps(result))
    finally:
        for proc in reversed(procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print(f"kept {tmp}")


if __name__ == "__main__":
    main()
