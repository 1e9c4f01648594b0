"""Under `./start_m1.sh`, a training worker killed with SIGKILL is restarted on its own: the web
answers /healthz throughout, `manage.py ping_worker` sees the new worker serve the training
queue, and logs/supervisor.log names the restart and the exit status. A killed gunicorn comes
back too, without its old workers left behind. A Ctrl-C at the terminal then still stops
everything, and promptly."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import psutil
import pytest

from tests.job_support import wait_for
from tests.start_script_support import StartedScript, get, still_running

pytestmark = [pytest.mark.worker, pytest.mark.timeout(600)]


class HealthPoller(threading.Thread):
    """GETs /healthz every 0.1 s and keeps every answer that was not a 200."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.url, self.polls, self.failures = url, 0, []
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.is_set():
            try:
                status = get(self.url, timeout=2)[0]
            except OSError as exc:
                status = exc
            self.polls += 1
            if status != 200:
                self.failures.append(status)
            time.sleep(0.1)

    def stop(self) -> None:
        self.stopped.set()
        self.join(timeout=10)


def the_one(script: StartedScript, *markers: str,
            ignore: frozenset[int] = frozenset()) -> psutil.Process | None:
    """The one live process whose command line has every marker and whose parent does not.

    `ignore`: pids known to be on their way out (a killed master's workers, orphaned for the
    moment before the supervisor's group kill reaches them)."""
    found = []
    for proc in script.processes():
        if proc.pid in ignore:
            continue
        try:  # a process that dies meanwhile (a zombie not yet reaped) is not counted
            if proc.status() == psutil.STATUS_ZOMBIE:
                continue
            command, parent = " ".join(proc.cmdline()), " ".join(proc.parent().cmdline())
        except psutil.Error:
            continue
        if all(m in command for m in markers) and not all(m in parent for m in markers):
            found.append((proc, command))
    assert len(found) <= 1, found
    return found[0][0] if found else None


def supervisor_log(script: StartedScript) -> str:
    path = script.app / "logs" / "supervisor.log"
    return path.read_text() if path.exists() else ""


def kill_the_training_worker(script: StartedScript) -> None:
    worker = the_one(script, "celery", "--hostname=training@")
    assert worker is not None
    poller = HealthPoller(script.url("/healthz"))
    poller.start()
    try:
        worker.kill()  # SIGKILL: no chance to say goodbye
        back = wait_for(lambda: (w := the_one(script, "celery", "--hostname=training@"))
                        and w.pid != worker.pid and w, 60, "a new training worker", poll=0.2)

        def served_by_the_new_worker() -> str | None:
            # The killed worker's heartbeat row may still look fresh: only the new pid counts.
            answer = script.manage("ping_worker", "--queue", "training", "--timeout", "10")
            return answer.stdout if answer.returncode == 0 and (
                f"pid {back.pid} " in answer.stdout) else None

        pinged = wait_for(served_by_the_new_worker, 90, "ping_worker to see the new worker",
                          poll=0.5)
        time.sleep(1)  # and a little after, while the new worker settles
    finally:
        poller.stop()
    assert "workers attached" in pinged, pinged
    assert poller.polls > 20
    assert poller.failures == [], f"/healthz failed {len(poller.failures)} of {poller.polls}"
    log = supervisor_log(script)
    assert "training worker was killed by SIGKILL (status 137)" in log, log
    assert "restarting it in 1 s (restart 1; its log: logs/celery_training.log)" in log, log


def kill_the_web(script: StartedScript) -> None:
    master = the_one(script, "gunicorn", "gunicorn_conf")
    assert master is not None
    old_workers = master.children()
    assert old_workers, "gunicorn runs its workers"
    master.kill()
    dying = frozenset(p.pid for p in old_workers)
    back = wait_for(lambda: (m := the_one(script, "gunicorn", "gunicorn_conf", ignore=dying))
                    and m.pid != master.pid and m, 60, "a new gunicorn", poll=0.2)

    def answers() -> bool:
        try:
            return get(script.url("/healthz"), timeout=2)[0] == 200
        except OSError:
            return False

    wait_for(answers, 60, "the new gunicorn to answer /healthz", poll=0.2)
    assert back.is_running()
    assert still_running(old_workers) == [], "the dead master's workers went with it"
    assert "web (gunicorn) was killed by SIGKILL (status 137)" in supervisor_log(script)


def test_a_killed_worker_or_web_is_restarted_alone_and_ctrl_c_still_stops_everything(
    tmp_path: Path,
) -> None:
    script = StartedScript(tmp_path)
    everything: list[psutil.Process] = []
    try:
        script.wait_until_running()
        inference = the_one(script, "celery", "--hostname=inference@")
        assert inference is not None
        kill_the_training_worker(script)
        kill_the_web(script)
        assert inference.is_running(), "the other processes were left alone"
        everything = script.processes()
    finally:
        took = script.ctrl_c(terminal=True)
    assert took < 30, f"Ctrl-C took {took:.1f} s"
    time.sleep(1)
    assert still_running(everything) == []
    assert "stopped" in script.output.read_text()
