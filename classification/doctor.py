"""The doctor: can this machine train MedLitBot's models without hanging?

    python manage.py doctor [--write-env] [--yes] [--smoke-timeout 60] [--no-services]
    python scripts/m1_training_setup.py [the same options]

Checks the platform and chip, torch and its devices (a tiny forward/backward on each candidate
device in a subprocess with a timeout, so a hang or segfault cannot take the doctor down), the
thread and tokenizer environment, Redis, the database, the Celery workers (from their heartbeat
rows), disk space and which models are available.
With --write-env it writes .env from env.m1.example with values fitting this machine, asking
before overwriting. Exits 1 when a blocker was found.

Django is set up only for the service checks, so the platform, torch and environment checks
run even where the settings cannot load.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent  # the repository: env.m1.example, .env
OK, WARN, FAIL = "ok", "warn", "FAIL"
SAFE_APPLE_ENV = {
    "PYTORCH_ENABLE_MPS_FALLBACK": "0",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "CUDA_VISIBLE_DEVICES": "",
}
SMOKE = """
import sys, time, torch
dev = torch.device(sys.argv[1])
t = time.perf_counter()
layers = [torch.nn.Linear(64, 64), torch.nn.GELU(), torch.nn.Linear(64, 4)]
model = torch.nn.Sequential(*layers).to(dev)
x = torch.randn(16, 64, device=dev)
loss = model(x).pow(2).mean()
loss.backward()
if dev.type == "cuda":
    torch.cuda.synchronize()
if dev.type == "mps":
    torch.mps.synchronize()
print(f"{time.perf_counter() - t:.3f}")
"""


@dataclass
class Check:
    name: str
    status: str
    detail: str


def is_apple_silicon() -> bool:
    return platform.system() == "Darwin" and platform.machine() == "arm64"


def physical_cores() -> int:
    try:
        import psutil

        cores = psutil.cpu_count(logical=False) or os.cpu_count() or 1
    except ImportError:
        cores = os.cpu_count() or 1
    if hasattr(os, "sched_getaffinity"):
        cores = min(cores, len(os.sched_getaffinity(0)))
    return max(1, cores)


def check_platform() -> list[Check]:
    chip = platform.processor() or platform.machine()
    if Path("/proc/cpuinfo").is_file():
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            if line.startswith("model name"):
                chip = line.split(":", 1)[1].strip()
                break
    elif is_apple_silicon():
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            chip = subprocess.run(["sysctl", "-n", "machdep.cpu.brand_string"], text=True,
                                  capture_output=True, timeout=5).stdout.strip() or chip
    detail = (f"{platform.system()} {platform.release()} {platform.machine()}, {chip}, "
              f"{physical_cores()} physical cores, Python {platform.python_version()}")
    return [Check("platform", OK, detail)]


def check_torch(smoke_timeout: float) -> list[Check]:
    try:
        import torch
    except ImportError as exc:
        return [Check("torch", FAIL, f"not importable ({exc}); pip install -r requirements.txt")]
    checks = [Check("torch", OK, f"torch {torch.__version__}")]
    cuda = torch.cuda.is_available()
    mps = bool(getattr(torch.backends, "mps", None) and torch.backends.mps.is_available())
    checks.append(Check("accelerators", OK, f"CUDA available: {cuda}; MPS available: {mps}"))
    devices = ["cpu"] + (["cuda"] if cuda else []) + (["mps"] if mps else [])
    for device in devices:
        checks.append(smoke_test(device, smoke_timeout))
    return checks


def smoke_test(device: str, timeout: float) -> Check:
    """A tiny forward/backward in a fresh process: a hang or a crash is reported, not suffered."""
    try:
        done = subprocess.run([sys.executable, "-c", SMOKE, device], capture_output=True,
                              text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        status = WARN if device != "cpu" else FAIL
        return Check(f"smoke test {device}", status,
                     f"forward/backward did not finish within {timeout:.0f} s (hangs here)")
    if done.returncode != 0:
        status = WARN if device != "cpu" else FAIL
        last = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        return Check(f"smoke test {device}", status, f"failed: {last[:200]}")
    return Check(f"smoke test {device}", OK, f"forward/backward in {done.stdout.strip()} s")


def recommended_env() -> dict[str, str | None]:
    """The environment this machine should train with (None: leave unset)."""
    if is_apple_silicon():
        return dict(SAFE_APPLE_ENV)
    return {
        "PYTORCH_ENABLE_MPS_FALLBACK": None,
        "OMP_NUM_THREADS": None,  # unset: torch uses one thread per core
        "MKL_NUM_THREADS": None,
        "TOKENIZERS_PARALLELISM": "false",
        "CUDA_VISIBLE_DEVICES": None,  # unset: keep any GPU visible
    }


def check_env() -> list[Check]:
    checks = []
    cores = physical_cores()
    for key, want in recommended_env().items():
        have = os.environ.get(key)
        if have == want or (want is None and have is None):
            checks.append(Check(f"env {key}", OK, f"{have!r}"))
        elif is_apple_silicon():
            checks.append(Check(f"env {key}", WARN,
                                f"is {have!r}; the Apple Silicon safe set wants {want!r}"))
        elif key in ("OMP_NUM_THREADS", "MKL_NUM_THREADS") and have and have != str(cores):
            checks.append(Check(f"env {key}", WARN,
                                f"is {have}: caps training below this machine's {cores} cores; "
                                "unset it (or set it to the core count)"))
        elif key == "CUDA_VISIBLE_DEVICES" and have is not None and have.strip('"') == "":
            checks.append(Check(f"env {key}", WARN, "is empty: it hides every GPU; unset it"))
        elif key == "TOKENIZERS_PARALLELISM":
            checks.append(Check(f"env {key}", WARN,
                                f"is {have!r}: set it to false (tokenizer threads + fork hang)"))
        else:
            checks.append(Check(f"env {key}", OK, f"{have!r} (fine on this platform)"))
    return checks


def _django() -> bool:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "medlitbot_project.settings")
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    try:
        import django

        django.setup()
    except Exception:
        return False
    return True


def check_services() -> list[Check]:
    if not _django():
        return [Check("django", FAIL, "settings could not be loaded; check .env")]
    checks = [check_database()]
    if checks[0].status != FAIL:
        checks += check_workers()
    checks.append(check_broker())
    checks += check_free_disk()
    checks.append(check_storage())
    checks.append(check_disk_used())
    checks += check_model_availability()
    return checks


def check_database() -> Check:
    """Which database, by engine, host and name (never the password), so a node that meant the
    team's PostgreSQL but runs on its own SQLite file is seen at once."""
    from django.conf import settings
    from django.db import connection

    from core.backing_services import database_description

    database = database_description()
    try:
        connection.ensure_connection()
    except Exception as exc:
        return Check("database", FAIL, f"{database} not reachable: {exc}")
    if connection.vendor == "sqlite" and settings.SHARED_STORAGE_URL:
        return Check("database", WARN, (
            f"{database} reachable, but SHARED_STORAGE_URL is set: every node has its own "
            "SQLite file; set DATABASE_URL=postgres://... on every node"))
    return Check("database", OK, f"{database} reachable")


def check_broker() -> Check:
    from django.conf import settings

    from core.broker import broker_is_redis, broker_ping

    broker = settings.CELERY_BROKER_URL
    if not broker_is_redis(broker):
        return Check("broker", OK, broker)
    try:
        broker_ping(timeout=2.0)
    except Exception as exc:
        return Check("redis", FAIL, f"{broker} not reachable: {exc}; start "
                                    "redis-server or set CELERY_BROKER_URL=filesystem://")
    return Check("redis", OK, f"{broker} reachable")


def check_free_disk() -> list[Check]:
    from django.conf import settings

    checks = []
    for label, folder in (("disk (models)", settings.MODEL_ARTIFACT_ROOT),
                          ("disk (media)", settings.MEDIA_ROOT)):
        path = Path(folder)
        while not path.exists() and path != path.parent:  # a folder not made yet: its parent
            path = path.parent
        free = shutil.disk_usage(path).free / 2**30
        status = FAIL if free < 1 else WARN if free < 5 else OK
        checks.append(Check(label, status, f"{free:.1f} GiB free at {path}"))
    return checks


def check_disk_used() -> Check:
    try:
        from classification.selectors import artifact_disk_usage

        used = artifact_disk_usage()
    except Exception as exc:
        return Check("disk used", WARN, f"could not measure: {exc}")
    return Check("disk used", OK, (
        f"trained models {used['models'] / 2**20:.0f} MB; checkpoints kept for resuming "
        f"{used['checkpoints'] / 2**20:.0f} MB in {used['job_folders']} job folder(s)"))


def check_model_availability() -> list[Check]:
    checks = []
    try:
        from classification import ml_models

        for key in ml_models.REGISTRY:
            info = ml_models.model_availability(key)
            usable = info["status"] in ("bundled", "cached")
            checks.append(Check(f"model {key}", OK if usable else WARN,
                                f"{info['status']}: {info['detail']}"))
    except Exception as exc:
        checks.append(Check("models", WARN, f"could not check model availability: {exc}"))
    return checks


def check_storage() -> Check:
    """Where durable files live, and on several machines whether the bucket answers and how
    full this node's cache is."""
    from core import filestore
    from core.processes import hostname

    if not filestore.shared_enabled():
        return Check("storage", OK, f"{filestore.describe()}; set SHARED_STORAGE_URL to run "
                                    "workers on several machines (docs/deploy.md)")
    problem = filestore.storage_check()
    if problem:
        return Check("storage", FAIL, f"{problem}: {filestore.describe()}")
    usage = filestore.cache_usage()
    return Check("storage", OK, (
        f"{filestore.describe()}: {usage['entries']} cached file(s)/model(s), "
        f"{usage['bytes'] / 2**20:.0f} of {usage['limit_bytes'] / 2**20:.0f} MB; "
        f"this node is {hostname()}"))


def gpu_worker_command(queue: str) -> str:
    """How to start the GPU workers by hand: one solo worker per GPU, each seeing only its own."""
    return ("for i in $(nvidia-smi --query-gpu=index --format=csv,noheader); do "
            "CUDA_VISIBLE_DEVICES=$i .venv/bin/celery -A medlitbot_project worker --pool=solo "
            f"--concurrency=1 --queues={queue} --hostname=gpu$i@%h & done "
            "(start_m1.sh does this when nvidia-smi -L lists GPUs)")


def _worker_line(worker: Any, *, gpu: bool) -> str:
    devices = worker.devices if worker.devices is not None else "unset"
    started = f", CUDA_VISIBLE_DEVICES={devices}" if gpu else ""
    return (f"{worker.hostname} ({worker.pool}{started}) {worker.activity}, "
            f"heartbeat {worker.age_seconds():.0f} s ago")


def check_workers() -> list[Check]:
    """Which Celery worker serves each queue, from the heartbeat rows the workers write.

    A warning, not a blocker: the doctor also runs before any worker has been started. The GPU
    training queue is optional (an install without GPUs is complete): its line says how to start
    one worker per GPU, and for each GPU worker which GPU it was given.
    """
    try:
        from django.conf import settings

        from core import selectors

        gpu_queue = settings.QUEUE_TRAINING_GPU
        coverage = selectors.worker_queue_coverage()
        [gpu] = selectors.worker_queue_coverage(queues=[gpu_queue])
    except Exception as exc:
        return [Check("workers", WARN, f"could not read worker heartbeats ({exc}); "
                      "run manage.py migrate")]
    checks = []
    for entry in coverage:
        name = f"worker {entry.queue}"
        if entry.ok:
            detail = "; ".join(_worker_line(w, gpu=False) for w in entry.live)
            checks.append(Check(name, OK, detail))
        else:
            checks.append(Check(name, WARN, f"{entry.problem()}; jobs for it wait in the queue "
                                "until one runs (start_m1.sh starts them)"))
    status = OK
    if gpu.ok:
        detail = "; ".join(_worker_line(w, gpu=True) for w in gpu.live)
        unpinned = [w.hostname for w in gpu.live if not (w.devices or "").strip()]
        if unpinned:
            # Unset: each such worker trains on GPU 0; empty: on the CPU. Neither is meant.
            status = WARN
            detail += (f". {', '.join(unpinned)} started without a GPU index in "
                       "CUDA_VISIBLE_DEVICES; restart each with CUDA_VISIBLE_DEVICES=<index>")
    else:
        detail = (f"none (optional: jobs train on {settings.QUEUE_TRAINING}). To train on GPUs, "
                  f"start one worker per GPU: {gpu_worker_command(gpu_queue)}")
    checks.append(Check(f"worker {gpu_queue}", status, detail))
    return checks


def run_checks(*, smoke_timeout: float = 60.0, services: bool = True) -> list[Check]:
    checks = check_platform() + check_torch(smoke_timeout) + check_env()
    return checks + (check_services() if services else [])


def env_text(template: str) -> str:
    """env.m1.example with the Apple Silicon block kept only where it belongs."""
    if is_apple_silicon():
        return template
    lines = []
    for line in template.splitlines():
        key = line.split("=", 1)[0]
        if key in SAFE_APPLE_ENV and key != "TOKENIZERS_PARALLELISM":
            line = f"# (Apple Silicon only) {line}"
        lines.append(line)
    return "\n".join(lines) + "\n"


def write_env(target: Path, *, assume_yes: bool, ask: Callable[[str], str] = input) -> bool:
    text = env_text((ROOT / "env.m1.example").read_text(encoding="utf-8"))
    if target.exists() and not assume_yes:
        answer = ask(f"{target} exists. Overwrite it? [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            return False
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, target)
    return True


def render(checks: list[Check], write: Callable[[str], None] = print) -> None:
    width = max(len(c.name) for c in checks)
    for c in checks:
        write(f"[{c.status:>4}] {c.name:<{width}}  {c.detail}")
    blockers = [c for c in checks if c.status == FAIL]
    warnings = [c for c in checks if c.status == WARN]
    write(f"{len(blockers)} blocker(s), {len(warnings)} warning(s)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The doctor's options, shared by the script and manage.py doctor."""
    parser.add_argument("--write-env", action="store_true", help="write .env for this machine")
    parser.add_argument("--yes", action="store_true", help="overwrite .env without asking")
    parser.add_argument("--env-file", default=str(ROOT / ".env"))
    parser.add_argument("--smoke-timeout", type=float, default=60.0)
    parser.add_argument("--no-services", action="store_true", help="skip DB/Redis/disk/models")


def run(options: Mapping[str, Any], write: Callable[[str], None] = print) -> int:
    """Run the checks with parsed options; 1 when a blocker was found."""
    checks = run_checks(smoke_timeout=options["smoke_timeout"],
                        services=not options["no_services"])
    render(checks, write)
    if options["write_env"]:
        target = Path(options["env_file"])
        if write_env(target, assume_yes=options["yes"]):
            write(f"wrote {target} for this machine")
        else:
            write(f"left {target} as it was")
    return 1 if any(c.status == FAIL for c in checks) else 0


def main(argv: list[str] | None = None, write: Callable[[str], None] = print) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(parser)
    return run(vars(parser.parse_args(argv)), write)
