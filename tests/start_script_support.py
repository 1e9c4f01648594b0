"""Running `./start_m1.sh` as a person would, on a fresh copy of the project: shared by the
start-script tests."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import psutil

from tests.job_support import wait_for
from tests.plugins.server import free_port
from tests.plugins.worker import ROOT

# What the tests' own processes set and a person's shell would not.
OUR_VARIABLES = ("DJANGO_", "DATABASE_URL", "USE_SQLITE", "SQLITE_PATH", "MEDIA_",
                 "MODEL_ARTIFACT", "LOG_DIR", "STATIC_ROOT", "CELERY_", "REDIS_URL",
                 "SECRET_KEY", "MEDLITBOT_")


def fresh_copy(target: Path) -> Path:
    """The tracked files, as a clone would have them, sharing this checkout's virtualenv."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=ROOT, capture_output=True, check=True).stdout.split(b"\0")
    for name in filter(None, files):
        source = ROOT / name.decode()
        if source.is_file():
            dest = target / name.decode()
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(source.read_bytes())
            dest.chmod(source.stat().st_mode)
    (target / ".venv").symlink_to(ROOT / ".venv")
    return target


def get(url: str, timeout: float = 5) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


class StartedScript:
    """`./start_m1.sh` running in `tmp_path/medlitbot` on a free port, its output in start.log."""

    def __init__(self, tmp_path: Path, **extra_env: str) -> None:
        self.app = fresh_copy(tmp_path / "medlitbot")
        self.output = tmp_path / "start.log"
        self.port = free_port()
        self.env = {key: value for key, value in os.environ.items()
                    if not key.startswith(OUR_VARIABLES)}
        self.env.update(PORT=str(self.port), REDIS_URL="redis://127.0.0.1:6379/12",
                        CELERY_QUEUE_PREFIX=f"start-test-{uuid.uuid4().hex[:8]}-", **extra_env)
        if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
            # A suite started in the background (`nohup … &`) ignores Ctrl-C's signal, the
            # script would inherit that, and bash cannot trap a signal ignored on entry. A
            # handler (unlike "ignore") is reset to the default on exec, as a terminal has it.
            signal.signal(signal.SIGINT, signal.default_int_handler)
        with self.output.open("ab") as log:
            self.process = subprocess.Popen(["./start_m1.sh"], cwd=self.app, env=self.env,
                                            stdout=log, stderr=subprocess.STDOUT,
                                            start_new_session=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def wait_until_running(self) -> str:
        def running() -> bool:
            text = self.output.read_text()
            if self.process.poll() is not None:  # no use waiting: say why at once
                raise AssertionError(f"start_m1.sh exited ({self.process.returncode}):\n"
                                     f"{text[-3000:]}")
            return "MedLitBot is running" in text

        wait_for(running, 480, "start_m1.sh to report that everything runs", poll=1)
        return self.output.read_text()

    def processes(self) -> list[psutil.Process]:
        """Every live process the script started, at any depth (its restart loops too)."""
        try:
            found = psutil.Process(self.process.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return []
        return [p for p in found if _alive(p)]

    def manage(self, *args: str) -> subprocess.CompletedProcess[str]:
        """A management command in the copy, as its operator would type it."""
        return subprocess.run([str(self.app / ".venv" / "bin" / "python"), "manage.py", *args],
                              cwd=self.app, env=self.env, capture_output=True, text=True,
                              timeout=120)

    def ctrl_c(self, timeout: float = 90, *, terminal: bool = False) -> float:
        """SIGINT to the script; the seconds it took to exit. `terminal`: to its whole process
        group, as a terminal's Ctrl-C does (the script's own helpers get it too)."""
        began = time.monotonic()
        if terminal:
            os.killpg(self.process.pid, signal.SIGINT)
        else:
            self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(timeout=timeout)
        finally:
            if self.process.poll() is None:
                self.kill_everything()
        return time.monotonic() - began

    def kill_everything(self) -> None:
        """After a failure: nothing the script started may outlive the test."""
        for proc in [*self.processes(), psutil.Process(self.process.pid)]:
            with contextlib.suppress(psutil.Error):
                proc.kill()
        self.process.wait(timeout=10)


def _alive(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def still_running(processes: list[psutil.Process]) -> list[list[str]]:
    """The command lines of those still alive (not zombies)."""
    alive = []
    for proc in processes:
        if _alive(proc):
            with contextlib.suppress(psutil.Error):
                alive.append(proc.cmdline())
    return alive


def start_env_then(app: Path, command: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Source scripts/start_env.sh as start_m1.sh does, then run `command` in that shell."""
    clean = {key: value for key, value in os.environ.items() if not key.startswith(OUR_VARIABLES)}
    script = (
        'set -euo pipefail; ROOT="$(pwd)"; PY="$ROOT/.venv/bin/python"; '
        f'. "$ROOT/scripts/start_env.sh"; {command}'
    )
    return subprocess.run(["bash", "-c", script], cwd=app, env={**clean, **env},
                          capture_output=True, text=True, timeout=120)
