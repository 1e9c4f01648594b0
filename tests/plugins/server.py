"""The real application server (gunicorn, as start_m1.sh runs it) for browser and API tests."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests.plugins.worker import ROOT, worker_env


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class AppServer:
    """gunicorn with the project's own config, pointed at the tests' database and folders."""

    def __init__(self, log_dir: Path, **env: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_dir = log_dir
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 60.0) -> AppServer:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        env = worker_env(**{
            "WEB_BIND": f"127.0.0.1:{self.port}", "WEB_WORKERS": "2", "WEB_THREADS": "8",
            "WEB_ACCESS_LOG": str(self.log_dir / "access.log"),
            "WEB_ERROR_LOG": str(self.log_dir / "gunicorn.log"),
            # The suite drops the test database at the end; pooled connections would block it.
            "CONN_MAX_AGE": "0",
            **self.env,  # a test's own settings win, WEB_WORKERS included
        })
        self.proc = subprocess.Popen(
            [str(Path(sys.executable).parent / "gunicorn"), "-c",
             "python:medlitbot_project.gunicorn_conf", "medlitbot_project.wsgi"],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"gunicorn exited with {self.proc.returncode}:\n{self.log()}")
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=1) as response:
                    if response.status == 200:
                        return self
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"gunicorn not serving after {timeout} s:\n{self.log()}")

    def log(self) -> str:
        path = self.log_dir / "gunicorn.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def worker_pids(self) -> list[int]:
        """The gunicorn worker processes (the arbiter's children) that serve requests."""
        assert self.proc is not None
        return [child.pid for child in psutil.Process(self.proc.pid).children()]

    def rss_bytes(self) -> int:
        """Memory of the arbiter and every worker together."""
        assert self.proc is not None
        procs = [psutil.Process(self.proc.pid), *psutil.Process(self.proc.pid).children()]
        return sum(p.memory_info().rss for p in procs)

    def restart(self) -> None:
        """Stop and start again on the same port: what a deploy or a crash does to the web."""
        self.stop()
        self.start()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="session")
def app_server(django_db_setup: None, django_db_blocker, tmp_path_factory) -> Iterator[AppServer]:
    """One gunicorn for the session; tests that use it need `transactional_db` for their rows."""
    with django_db_blocker.unblock():
        server = AppServer(tmp_path_factory.mktemp("gunicorn")).start()
    yield server
    server.stop()


@pytest.fixture
def start_app_server(transactional_db: None, tmp_path: Path) -> Iterator:
    """Call `start_app_server(**env)` for a gunicorn of the test's own (to restart or measure)."""
    servers: list[AppServer] = []

    def start(**env: str) -> AppServer:
        server = AppServer(tmp_path / f"gunicorn{len(servers)}", **env).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()
