"""An upload that never finishes leaves no spooled file behind for long.

An upload larger than FILE_UPLOAD_MAX_MEMORY_SIZE is spooled into FILE_UPLOAD_TEMP_DIR while it
arrives. Sent to the real server (gunicorn) and cut short: a client that hangs up leaves nothing
there; a web worker killed mid-upload leaves its file, which beat's maintenance run removes once
nobody has written to it for SPOOL_STALE_SECONDS, while a file still being written stays.
"""

from __future__ import annotations

import os
import signal
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from core import uploads
from core.maintenance import maintenance_run

pytestmark = pytest.mark.django_db(transaction=True)

BOUNDARY = "medlitbot-cut-short"
FILE_BYTES = 12 * 2**20  # the 12 MB the killed upload left behind
SENT_BYTES = 7 * 2**20  # past the 5 MB kept in memory: spooled to disk


def _spooled(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file()) if folder.is_dir() else []


def _wait_for(check: Any, *, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if found := check():
            return found
        time.sleep(0.1)
    return check()


@contextmanager
def _upload_half_sent(url: str, token: str) -> Iterator[socket.socket]:
    """A multipart dataset upload declaring 12 MB of file, of which 7 MB are sent."""
    host, port = url.removeprefix("http://").split(":")
    head = (f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; '
            f'filename="big.csv"\r\nContent-Type: text/csv\r\n\r\n').encode()
    tail = f"\r\n--{BOUNDARY}--\r\n".encode()
    request = (f"POST /api/datasets/ HTTP/1.1\r\nHost: {host}:{port}\r\n"
               f"Authorization: Token {token}\r\n"
               f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\n"
               f"Content-Length: {len(head) + FILE_BYTES + len(tail)}\r\n\r\n").encode()
    sock = socket.create_connection((host, int(port)), timeout=30)
    try:
        sock.sendall(request + head)
        row = b"Statins after infarction,Fewer events.,cardiovascular\r\n"
        chunk = (row * (2**16 // len(row) + 1))[:2**16]
        for _ in range(SENT_BYTES // len(chunk)):
            sock.sendall(chunk)
        yield sock
    finally:
        sock.close()


@pytest.fixture
def spool(tmp_path: Path, settings: Any) -> Path:
    folder = tmp_path / "spool"
    settings.FILE_UPLOAD_TEMP_DIR = str(folder)  # this process's sweep looks where the web spools
    return folder


def test_a_client_that_hangs_up_mid_upload_leaves_no_file(
        start_app_server: Any, api_token: str, spool: Path) -> None:
    server = start_app_server(FILE_UPLOAD_TEMP_DIR=str(spool), WEB_WORKERS="1")
    with _upload_half_sent(server.url, api_token):
        assert _wait_for(lambda: _spooled(spool)), "the upload was not spooled to its folder"
    assert _wait_for(lambda: not _spooled(spool)), _spooled(spool)


def test_a_killed_web_worker_s_file_is_removed_by_the_sweep_once_stale(
        start_app_server: Any, api_token: str, spool: Path) -> None:
    server = start_app_server(FILE_UPLOAD_TEMP_DIR=str(spool), WEB_WORKERS="1")
    with _upload_half_sent(server.url, api_token):
        left = _wait_for(lambda: [p for p in _spooled(spool) if p.stat().st_size > 2**20])
        assert left, "the upload was not spooled to its folder"
        for pid in server.worker_pids():
            os.kill(pid, signal.SIGKILL)
    time.sleep(0.5)
    assert _spooled(spool) == left  # nothing deletes it: the process that would is gone

    maintenance_run()
    assert _spooled(spool) == left  # it might still be arriving: kept until it is stale

    long_ago = time.time() - uploads.SPOOL_STALE_SECONDS - 60
    os.utime(left[0], (long_ago, long_ago))
    (spool / "arriving.upload").write_bytes(b"still being written")
    done = maintenance_run()
    assert "1 abandoned upload file(s) removed" in done
    assert [p.name for p in _spooled(spool)] == ["arriving.upload"]
