"""Where batch classifications live: one folder per batch, a small status.json, the result CSV.

Files, not a table, because no model for batches exists yet (the classification app owns the
models); the layout MEDIA_ROOT/batches/<owner id>/<batch id>/ scopes every read to its owner, so
another user's batch id opens nothing, and a batch id is 32 hex characters that cannot walk the
filesystem. status.json is replaced atomically, so a poller never reads half a write.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import time
from pathlib import Path
from typing import Any

from django.conf import settings

BATCH_ID_RE = re.compile(r"^[0-9a-f]{32}$")
ACTIVE = ("queued", "running")
LABELS = {"queued": "Queued", "running": "Running", "completed": "Completed",
          "failed": "Failed", "interrupted": "Interrupted"}
KEEP_SECONDS = 7 * 24 * 3600
INTERRUPTED_REASON = (
    "The web server restarted while this batch was running, so it stopped. Upload the file "
    "again to classify it."
)


def batch_root(owner_id: int) -> Path:
    return Path(settings.MEDIA_ROOT) / "batches" / str(int(owner_id))


def batch_folder(owner_id: int, batch_id: str) -> Path | None:
    if not BATCH_ID_RE.match(batch_id or ""):
        return None
    folder = batch_root(owner_id) / batch_id
    return folder if folder.is_dir() else None


def status_write(folder: Path, status: dict[str, Any]) -> None:
    status["updated_at"] = time.time()
    tmp = folder / "status.json.tmp"
    tmp.write_text(json.dumps(status), encoding="utf-8")
    os.replace(tmp, folder / "status.json")


def status_read(folder: Path) -> dict[str, Any] | None:
    try:
        status = json.loads((folder / "status.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if status.get("status") in ACTIVE and not runner_alive(status):
        status = {**status, "status": "interrupted", "reason": INTERRUPTED_REASON}
    return status


def runner_identity() -> dict[str, Any]:
    """Who runs a batch: host, pid and the pid's start time (a reused pid has another)."""
    import psutil

    return {"host": socket.gethostname(), "pid": os.getpid(),
            "pid_started": psutil.Process().create_time()}


def runner_alive(status: dict[str, Any]) -> bool:
    runner = status.get("runner") or {}
    if runner.get("host") != socket.gethostname():
        # Another machine shares MEDIA_ROOT: trust it while it keeps writing.
        return time.time() - float(status.get("updated_at") or 0) < 600
    import psutil

    try:
        return psutil.Process(int(runner.get("pid") or 0)).create_time() == runner.get(
            "pid_started")
    except (psutil.Error, ValueError):
        return False


def batch_list(*, owner_id: int, limit: int = 10) -> list[dict[str, Any]]:
    root = batch_root(owner_id)
    if not root.is_dir():
        return []
    found = [s for f in root.iterdir() if f.is_dir() and (s := status_read(f))]
    found.sort(key=lambda s: s.get("created_at", 0), reverse=True)
    return found[:limit]


def purge_old(owner_id: int) -> None:
    root = batch_root(owner_id)
    if not root.is_dir():
        return
    cutoff = time.time() - KEEP_SECONDS
    for folder in root.iterdir():
        if folder.is_dir() and folder.stat().st_mtime < cutoff:
            shutil.rmtree(folder, ignore_errors=True)
