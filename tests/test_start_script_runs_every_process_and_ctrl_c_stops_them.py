"""`./start_m1.sh` on a fresh copy of the project ends with everything running in production
mode (gunicorn, the training and inference workers, beat), and Ctrl-C stops all of it."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import psutil
import pytest

from tests.job_support import wait_for
from tests.plugins.server import free_port
from tests.plugins.worker import ROOT

pytestmark = [pytest.mark.worker, pytest.mark.timeout(600)]


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


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_start_script_serves_with_gunicorn_and_ctrl_c_stops_every_process(tmp_path: Path) -> None:
    app = fresh_copy(tmp_path / "medlitbot")
    port = free_port()
    env = {
        key: value for key, value in os.environ.items()
        if not key.startswith(("DJANGO_", "DATABASE_URL", "USE_SQLITE", "SQLITE_PATH", "MEDIA_",
                               "MODEL_ARTIFACT", "LOG_DIR", "STATIC_ROOT", "CELERY_",
                               "REDIS_URL", "SECRET_KEY", "MEDLITBOT_"))
    }
    env.update(PORT=str(port), REDIS_URL="redis://127.0.0.1:6379/12",
               CELERY_QUEUE_PREFIX=f"start-test-{uuid.uuid4().hex[:8]}-")
    log = (tmp_path / "start.log").open("ab")
    script = subprocess.Popen(["./start_m1.sh"], cwd=app, env=env, stdout=log,
                              stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_for(lambda: "MedLitBot is running" in (tmp_path / "start.log").read_text(), 480,
                 "start_m1.sh to report that everything runs", poll=1)
        text = (tmp_path / "start.log").read_text()
        assert "generated a random SECRET_KEY" in text
        dotenv = (app / ".env").read_text()
        assert "\nDEBUG=False" in dotenv
        key = next(line for line in dotenv.splitlines() if line.startswith("SECRET_KEY="))
        assert len(key) > 50
        started = psutil.Process(script.pid).children(recursive=True)
        commands = [" ".join(p.cmdline()) for p in started]
        assert any("gunicorn" in c and "gunicorn_conf" in c for c in commands), commands
        assert any("worker" in c and "--pool=solo" in c and "training" in c for c in commands)
        assert any("worker" in c and "inference" in c for c in commands)
        assert any(" beat" in c for c in commands)
        assert not any("runserver" in c for c in commands)
        assert get(f"http://127.0.0.1:{port}/healthz")[0] == 200
        status, body = get(f"http://127.0.0.1:{port}/readyz")
        assert status == 200, body
        # Production mode: an unknown page is a plain 404, not Django's debug page.
        status, body = get(f"http://127.0.0.1:{port}/no-such-page/")
        assert status == 404
        assert "URLconf" not in body
    finally:
        script.send_signal(signal.SIGINT)  # what Ctrl-C sends to the script
        try:
            script.wait(timeout=90)
        finally:
            if script.poll() is None:
                os.killpg(script.pid, signal.SIGKILL)
    time.sleep(1)
    alive = [p for p in started if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert not alive, [p.cmdline() for p in alive]
