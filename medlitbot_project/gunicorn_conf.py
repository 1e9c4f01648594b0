"""gunicorn settings for the web process: `gunicorn -c python:medlitbot_project.gunicorn_conf`.

Why gunicorn (WSGI) and not uvicorn (ASGI): every view is synchronous Django and ORM code, the
long work (training, batches) runs on Celery, and progress is polled, not pushed. ASGI would buy
nothing here but sync-to-async hops. gunicorn's gthread workers give real concurrency for slow
clients and uploads, a 2048-connection backlog (runserver's is 10), and worker recycling.

Every value can be overridden from the environment (documented in env.m1.example).
"""

from __future__ import annotations

import os

import psutil

_cores = psutil.cpu_count(logical=True) or 1
_gib = psutil.virtual_memory().total / 2**30

bind = os.environ.get("WEB_BIND", "127.0.0.1:8000")
# One process per core, at least two so one busy or recycling worker never leaves the site dark.
# Each process may hold a loaded transformer for synchronous predictions (~100-500 MB), so small
# machines get fewer; threads serve the many cheap requests (pages, progress polls).
_default_workers = max(2, min(_cores, int(_gib // 2) or 1, 8))
workers = int(os.environ.get("WEB_WORKERS") or _default_workers)
worker_class = "gthread"
threads = int(os.environ.get("WEB_THREADS") or 8)
backlog = 2048
# A request may run a synchronous prediction on a cold model (load + predict); uploads stream.
timeout = int(os.environ.get("WEB_TIMEOUT") or 120)
graceful_timeout = 30
keepalive = 5
# Recycle workers now and then so a slow leak in a library never grows without bound.
max_requests = 2000
max_requests_jitter = 200
# The worker heartbeat file lives in RAM, so a slow disk never makes the arbiter kill a worker.
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") else None

_log_dir = os.environ.get("LOG_DIR") or os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "logs")
os.makedirs(_log_dir, exist_ok=True)
accesslog = os.environ.get("WEB_ACCESS_LOG") or os.path.join(_log_dir, "access.log")
errorlog = os.environ.get("WEB_ERROR_LOG") or os.path.join(_log_dir, "gunicorn.log")
# Request time in microseconds (%(D)s) so latency can be read off the access log.
access_log_format = '%(h)s %(l)s %(u)s %(t)s "%(r)s" %(s)s %(b)s %(D)sus "%(a)s"'
loglevel = os.environ.get("WEB_LOG_LEVEL", "info")
# Behind a reverse proxy on another address, list it here so X-Forwarded-* is trusted.
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1,::1")
proc_name = "medlitbot-web"

# /metrics must sum every gunicorn process's request latencies, not just the one it lands on:
# prometheus_client's multiprocess mode shares them through files in this (emptied) folder.
_metrics_dir = os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR",
                                     os.path.join(_log_dir, "prometheus"))
os.makedirs(_metrics_dir, exist_ok=True)
for _stale in os.listdir(_metrics_dir):
    os.remove(os.path.join(_metrics_dir, _stale))


def child_exit(server: object, worker: object) -> None:
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)  # type: ignore[attr-defined]
