"""`./start_m1.sh` on a fresh copy of the project ends with everything running in production
mode (gunicorn, the training and inference workers, beat), and Ctrl-C stops all of it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.start_script_support import StartedScript, get, still_running

pytestmark = [pytest.mark.worker, pytest.mark.timeout(600)]


def test_start_script_serves_with_gunicorn_and_ctrl_c_stops_every_process(tmp_path: Path) -> None:
    script = StartedScript(tmp_path)
    started = []
    try:
        text = script.wait_until_running()
        assert "generated a random SECRET_KEY" in text
        dotenv = (script.app / ".env").read_text()
        assert "\nDEBUG=False" in dotenv
        key = next(line for line in dotenv.splitlines() if line.startswith("SECRET_KEY="))
        assert len(key) > 50
        started = script.processes()
        commands = [" ".join(p.cmdline()) for p in started]
        assert any("gunicorn" in c and "gunicorn_conf" in c for c in commands), commands
        assert any("worker" in c and "--pool=solo" in c and "training" in c for c in commands)
        inference = [p for p, c in zip(started, commands, strict=True)
                     if "worker" in c and "inference" in c]
        assert inference, commands
        # Below the web's priority, so a large batch never slows the pages (INFERENCE_NICE).
        assert {p.nice() for p in inference} == {10}
        assert any(" beat" in c for c in commands)
        assert not any("runserver" in c for c in commands)
        assert get(script.url("/healthz"))[0] == 200
        status, body = get(script.url("/readyz"))
        assert status == 200, body
        # Production mode: an unknown page is a plain 404, not Django's debug page.
        status, body = get(script.url("/no-such-page/"))
        assert status == 404
        assert "URLconf" not in body
    finally:
        script.ctrl_c()
    time.sleep(1)
    assert not still_running(started)
