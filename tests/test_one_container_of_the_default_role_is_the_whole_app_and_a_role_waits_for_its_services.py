"""The image's default role (`all`, scripts/container_entrypoint.sh) is the whole app in one
container: web, both workers and beat, so /readyz says ready and a model can be trained. The
web role alone says at start that no worker runs beside it. A role whose PostgreSQL or Redis
does not answer waits a bounded time, then names the service, never its password (podman 4.3
ignores compose's conditions, so the entrypoint waits itself)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.test_container_entrypoint_starts_each_role_as_start_m1_does_and_alone_runs_on_sqlite import (  # noqa: E501
    ENTRYPOINT,
    _env,
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def with_python(env: dict[str, str]) -> dict[str, str]:
    """The image's PATH has the virtualenv's python first; here, this test run's."""
    return {**env, "PATH": f"{Path(sys.executable).parent}:{env['PATH']}"}


def readyz(port: int) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")
    except OSError:
        return 0, {}


def test_the_default_role_starts_web_both_workers_and_beat_and_is_ready(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    port = free_port()
    env = with_python(_env(data, PORT=str(port), WEB_WORKERS="1", WORKER_HEARTBEAT_INTERVAL="2",
                           INFERENCE_CONCURRENCY="1", TRAINING_NICE="0"))
    log_path = tmp_path / "container.log"
    # No role given: the image's default. Its own session, so every process it starts is ended.
    container = subprocess.Popen(["bash", str(ENTRYPOINT)], env=env, cwd=tmp_path,
                                 stdout=log_path.open("wb"), stderr=subprocess.STDOUT,
                                 start_new_session=True)
    try:
        deadline, status, body = time.monotonic() + 300, 0, {}
        while time.monotonic() < deadline and status != 200:
            assert container.poll() is None, log_path.read_text(errors="replace")
            time.sleep(2)
            status, body = readyz(port)
        assert status == 200, (body, log_path.read_text(errors="replace")[-4000:])
        # Ready means a live worker on every queue; beat and web say they started.
        time.sleep(3)
        log = log_path.read_text(errors="replace")
        assert "started web on port" in log
        assert f"[medlitbot web] serving on 0.0.0.0:{port}" in log
        assert "beat: Starting" in log, log[-3000:]
        assert "runs the web server only" not in log
    finally:
        container.send_signal(signal.SIGTERM)
        try:
            container.wait(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(container.pid, signal.SIGKILL)
            container.wait()
    assert container.returncode == 0, log_path.read_text(errors="replace")[-3000:]


def test_the_web_role_alone_says_no_worker_runs_beside_it(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stub = bin_dir / "gunicorn"  # the server itself is not what is tested here
    stub.write_text("#!/bin/sh\nexit 0\n")
    stub.chmod(0o755)
    env = with_python(_env(tmp_path / "data", SECRET_KEY="k" * 50))
    env["PATH"] = f"{bin_dir}:{env['PATH']}"
    done = subprocess.run(["bash", str(ENTRYPOINT), "web"], env=env, capture_output=True,
                          text=True, timeout=300, check=True)
    assert "runs the web server only: nothing trains or classifies" in done.stderr
    assert "/readyz answers 503" in done.stderr


@pytest.mark.parametrize(("variable", "url", "service"), [
    ("DATABASE_URL", "postgres://medlitbot:s3cretpw@127.0.0.1:{port}/medlitbot", "PostgreSQL"),
    ("REDIS_URL", "redis://:s3cretpw@127.0.0.1:{port}/0", "Redis"),
])
def test_a_role_waits_for_its_service_then_names_it_without_its_password(
        tmp_path: Path, variable: str, url: str, service: str) -> None:
    port = free_port()  # nothing listens there
    env = with_python(_env(tmp_path / "data", SECRET_KEY="k" * 50, SERVICE_WAIT_SECONDS="3",
                           **{variable: url.format(port=port)}))
    started = time.monotonic()
    done = subprocess.run(["bash", str(ENTRYPOINT), "worker-training"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert time.monotonic() - started >= 3
    assert f"waiting for {service} at 127.0.0.1:{port}" in done.stderr
    assert f"{service} at 127.0.0.1:{port} did not accept a connection in 3 s" in done.stderr
    assert "s3cretpw" not in done.stdout + done.stderr
