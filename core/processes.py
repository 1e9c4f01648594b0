"""Process plumbing: is a PID alive and ours, signal names, dying with the parent, killing."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import sys
import threading
import time
from datetime import datetime
from multiprocessing.process import BaseProcess

logger = logging.getLogger(__name__)

# A process is "ours" when its command line has one of these: the Celery worker, a spawned
# multiprocessing child of it, or a MedLitBot management command.
OUR_MARKERS = ("celery", "medlitbot", "multiprocessing", "spawn_main", "manage.py")
PR_SET_PDEATHSIG = 1


def hostname() -> str:
    """This node's name as job rows record it (NODE_NAME, else the machine's host name)."""
    from django.conf import settings

    return getattr(settings, "NODE_NAME", "") or socket.gethostname()


def pid_alive(pid: int | None) -> bool:
    if not pid:
        return False
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False


def pid_alive_since(pid: int | None, *, started_at: datetime | None) -> bool:
    """Is `pid` alive and the same process that claimed a job at `started_at`?

    A PID the kernel handed to a newer process after the job started is not its worker, so the
    process must also be older than the claim (one second of clock slack).
    """
    if not pid_alive(pid):
        return False
    import psutil

    try:
        created = psutil.Process(pid).create_time()
    except psutil.Error:
        return False
    started = started_at.timestamp() if started_at else time.time()
    return created <= started + 1.0


def is_our_process(pid: int | None) -> bool:
    """True only for a live process of this user whose command line is a MedLitBot one."""
    if not pid:
        return False
    if pid == os.getpid():
        return True
    import psutil

    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return False
        if proc.uids().real != os.getuid():
            return False
        cmdline = " ".join(proc.cmdline())
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False
    return any(marker in cmdline for marker in OUR_MARKERS)


def describe_exit(exitcode: int | None) -> str:
    if exitcode is None:
        return "training process did not report an exit code"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        hint = " (out of memory?)" if -exitcode == signal.SIGKILL else ""
        return f"training process killed by {name}{hint}"
    return f"training process exited with code {exitcode} without finishing the job"


def cpu_seconds(pid: int) -> float | None:
    """User plus system CPU seconds the process has used; None when it is gone or unreadable."""
    import psutil

    try:
        times = psutil.Process(pid).cpu_times()
    except (psutil.Error, OSError):
        return None
    return float(times.user + times.system)


def die_with_parent(parent_pid: int) -> None:
    """Make this (child) process die when its parent does, so no training outlives its worker."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    # The parent may have died before prctl took effect; and macOS has no prctl at all.
    if os.getppid() != parent_pid:
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent_pid:
                os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def stop_process(proc: BaseProcess, *, grace: float = 5.0) -> None:
    """SIGTERM, then SIGKILL after `grace` seconds (a SIGSTOPped process ignores SIGTERM)."""
    if not proc.is_alive():
        return
    proc.terminate()
    proc.join(grace)
    if proc.is_alive():
        proc.kill()
        proc.join(10)


def kill_pid(pid: int, *, grace: float = 5.0) -> bool:
    """Terminate then kill a PID we have checked is ours; True when it is gone."""
    import psutil

    if pid == os.getpid():
        return False  # never ourselves, whatever the row says
    try:
        proc = psutil.Process(pid)
        proc.terminate()
        try:
            proc.wait(grace)
        except psutil.TimeoutExpired:
            proc.kill()
            proc.wait(10)
    except psutil.NoSuchProcess:
        return True
    except (psutil.AccessDenied, psutil.TimeoutExpired) as exc:
        logger.warning("could not kill pid %s: %s", pid, exc)
        return False
    return True
