"""Fault injection for the fault tests: hangs, freezes and crashes at named points of a training.

Active only when ``settings.MEDLITBOT_FAULT_INJECTION`` is set, which only the test settings read,
so no environment variable can make a production process hang. The value is a comma-separated
list, e.g. ``"hang_in_loading"`` or ``"slow_step=0.3,hang_in_step"``:

- ``hang_in_<point>``: sleep forever there (the GIL is released, so heartbeats continue: this is
  what a deadlock in native code looks like, and only progress staleness can catch it)
- ``freeze_in_<point>``: SIGSTOP ourselves (a frozen process: heartbeats stop too)
- ``crash_in_<point>``: SIGKILL ourselves (what the kernel's OOM killer does)
- ``raise_in_<point>``: raise RuntimeError (an ordinary bug)
- ``slow_step=<seconds>``: sleep this long in every training step (time to act mid-epoch)
- ``slow_save=<seconds>``: sleep this long inside every checkpoint save (a slow disk); the sleep
  falls within the save the engine times, so it counts as save time everywhere
- ``ignore_cancel``: never honour cancel_requested (tests the grace-period kill)

Points: ``loading`` (model loading) and ``step`` (the first training step).
"""

from __future__ import annotations

import logging
import os
import signal
import time

logger = logging.getLogger(__name__)


def active_faults() -> dict[str, str]:
    from django.conf import settings

    raw = getattr(settings, "MEDLITBOT_FAULT_INJECTION", "") or ""
    faults: dict[str, str] = {}
    for item in raw.split(","):
        name, _, value = item.strip().partition("=")
        if name:
            faults[name] = value
    return faults


def maybe_hang(point: str) -> None:
    faults = active_faults()
    if not faults:
        return
    if f"raise_in_{point}" in faults:
        raise RuntimeError(f"injected fault: raise_in_{point}")
    if f"crash_in_{point}" in faults:
        logger.warning("fault injection: SIGKILL in %s", point)
        os.kill(os.getpid(), signal.SIGKILL)
    if f"freeze_in_{point}" in faults:
        logger.warning("fault injection: SIGSTOP in %s", point)
        os.kill(os.getpid(), signal.SIGSTOP)
    if f"hang_in_{point}" in faults:
        logger.warning("fault injection: hanging in %s", point)
        while True:
            time.sleep(3600)


def step_delay() -> None:
    value = active_faults().get("slow_step")
    if value:
        time.sleep(float(value))


def save_delay() -> None:
    value = active_faults().get("slow_save")
    if value:
        time.sleep(float(value))


def ignores_cancel() -> bool:
    return "ignore_cancel" in active_faults()
