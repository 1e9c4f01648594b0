"""start_m1.sh's broker step (scripts/start_redis.sh, sourced as start_m1.sh sources it): with no
Redis at REDIS_URL it starts its own redis-server with a password, generated once and written
into REDIS_URL in .env (mode 600), never on the server's command line; a second start reuses
it, and so does a restart after that Redis died. A Redis that answers without a password is
used, with a warning that says how to set one."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import stat
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
import redis
from django.conf import settings

from tests.plugins.worker import ROOT

PY = ROOT / ".venv" / "bin" / "python"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def broker_step(app: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items()
             if not k.startswith(("REDIS_URL", "CELERY_", "CACHE_URL"))}
    script = ('set -euo pipefail; ROOT="$(pwd)"; '
              f'PY="{PY}"; say() {{ echo "[medlitbot] $*"; }}; '
              'warn() { echo "[medlitbot] WARNING: $*" >&2; }; '
              f'. "{ROOT}/scripts/start_redis.sh"; echo "REDIS_URL=$REDIS_URL"')
    return subprocess.run(["bash", "-c", script], cwd=app, env={**clean, **env},
                          capture_output=True, text=True, timeout=60)


@pytest.fixture
def app(tmp_path: Path) -> Iterator[Path]:
    port = free_port()
    (tmp_path / ".env").write_text(f"SECRET_KEY=x\nREDIS_URL=redis://127.0.0.1:{port}/0\n")
    yield tmp_path
    pidfile = tmp_path / "logs" / "redis.pid"
    if pidfile.exists():
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(pidfile.read_text()), signal.SIGTERM)


def url_in_env_file(app: Path) -> str:
    (line,) = [x for x in (app / ".env").read_text().splitlines() if x.startswith("REDIS_URL=")]
    return line.removeprefix("REDIS_URL=")


def test_no_redis_starts_one_with_a_generated_password_kept_in_the_env_file(app: Path) -> None:
    first = broker_step(app)
    assert first.returncode == 0, first.stderr
    assert "generated a Redis password in .env (REDIS_URL)" in first.stdout
    url = url_in_env_file(app)
    password = re.fullmatch(r"redis://:([0-9a-f]{48})@127\.0\.0\.1:\d+/0", url)[1]
    assert f"REDIS_URL={url}" in first.stdout
    assert password not in first.stderr
    assert stat.S_IMODE((app / ".env").stat().st_mode) == 0o600
    assert stat.S_IMODE((app / "logs" / "redis.conf").stat().st_mode) == 0o600
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    with pytest.raises(redis.AuthenticationError):
        redis.Redis(port=port).ping()
    assert redis.Redis.from_url(url).ping()
    server = psutil.Process(int((app / "logs" / "redis.pid").read_text()))
    assert password not in " ".join(server.cmdline())  # `ps` does not show it

    again = broker_step(app)  # the next start: the same Redis, the same password
    assert again.returncode == 0, again.stderr
    assert "generated" not in again.stdout
    assert url_in_env_file(app) == url

    server.terminate()
    server.wait(10)
    time.sleep(0.2)
    after_a_crash = broker_step(app)
    assert after_a_crash.returncode == 0, after_a_crash.stderr
    assert "starting redis-server with a password" in after_a_crash.stdout
    assert url_in_env_file(app) == url
    assert redis.Redis.from_url(url).ping()


def test_a_redis_without_a_password_is_used_with_a_warning(app: Path) -> None:
    done = broker_step(app, REDIS_URL=settings.REDIS_URL)
    assert done.returncode == 0, done.stderr
    assert f"REDIS_URL={settings.REDIS_URL}" in done.stdout
    assert "takes no password" in done.stderr
    assert "A password for Redis" in done.stderr
    assert not (app / "logs" / "redis.pid").exists()
