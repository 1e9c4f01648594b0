"""A 1 GB upload to the real gunicorn server, with a Content-Length and chunked without one, to
the upload page and to the API, is answered 413 with the reason while it is still arriving; the
web processes' memory stays flat and no temporary file is left behind."""

from __future__ import annotations

import http.client
import select
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from api.tokens import token_create
from dataset_management.models import Dataset
from tests.import_support import import_run_last
from tests.plugins.datasets import media_files

pytestmark = pytest.mark.timeout(600)

GIB = 2**30
LIMIT_MB = 100  # larger than the allowed growth, so a server that buffered the body would fail
MAX_GROWTH = 50 * 2**20
CSRF = "c" * 32  # the cookie and the form field only have to match
BOUNDARY = "medlitbot-upload-test"
HEAD = (
    f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"csrfmiddlewaretoken\"\r\n\r\n"
    f"{CSRF}\r\n--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nHuge\r\n"
    f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"huge.csv\"\r\n"
    "Content-Type: text/csv\r\n\r\ntitle,abstract,label\r\n"
).encode()
TAIL = f"\r\n--{BOUNDARY}--\r\n".encode()
ROW = b"Heart failure outcomes,An abstract about the heart and the brain.,cardiovascular\r\n"
CHUNK = ROW * (2**20 // len(ROW))


class Peak:
    """Samples the server's memory every 50 ms while a request runs."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.server.rss_bytes())
            self._stop.wait(0.05)

    def __enter__(self) -> Peak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.server.rss_bytes())


def stream_upload(port: int, path: str, headers: dict[str, str], *, chunked: bool,
                  total: int = GIB) -> tuple[int, bytes, int]:
    """POST a `total`-byte multipart body in 1 MB pieces, stopping as soon as the server answers.

    Returns the status, the body of the answer, and how many bytes were sent before it came.
    """
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.putrequest("POST", path)
    for key, value in headers.items():
        conn.putheader(key, value)
    if chunked:
        conn.putheader("Transfer-Encoding", "chunked")
    else:
        conn.putheader("Content-Length", str(total))
    conn.endheaders()
    sock = conn.sock

    def send(data: bytes) -> None:
        sock.sendall(b"%x\r\n%s\r\n" % (len(data), data) if chunked else data)

    sent = 0
    try:
        send(HEAD)
        sent = len(HEAD)
        while sent < total - len(TAIL):
            if select.select([sock], [], [], 0)[0]:
                break  # the answer is there: a client would stop sending now
            piece = CHUNK[: total - len(TAIL) - sent]
            send(piece)
            sent += len(piece)
        else:
            send(TAIL)
            if chunked:
                sock.sendall(b"0\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server answered and closed while the body was still arriving
    response = conn.getresponse()
    body = response.read()
    conn.close()
    return response.status, body, sent


@pytest.fixture
def tmp_uploads(tmp_path: Path) -> Path:
    folder = tmp_path / "server-tmp"
    folder.mkdir()
    return folder


@pytest.fixture
def server(start_app_server, tmp_uploads: Path):
    # TMPDIR is where Django spools an upload too big for memory; the test reads it afterwards.
    # One gunicorn process: the warm-up request then surely lands on the process that receives
    # the upload, so a cold process's first imports (~100 MB on PostgreSQL) are never counted
    # as the upload's memory.
    return start_app_server(MAX_UPLOAD_SIZE_MB=str(LIMIT_MB), TMPDIR=str(tmp_uploads),
                            WEB_WORKERS="1")


@pytest.fixture
def credentials(transactional_db: None) -> dict[str, str]:
    user = get_user_model().objects.create_user("uploader", password="uploader-pass-123")
    client = Client()
    client.force_login(user)
    return {
        "cookie": f"sessionid={client.cookies['sessionid'].value}; csrftoken={CSRF}",
        "token": token_create(user=user, name="upload test")[1],
    }


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
@pytest.mark.parametrize(("path", "auth"), [("/datasets/upload/", "session"),
                                            ("/api/datasets/", "token")], ids=["web", "api"])
def test_a_1_gb_upload_is_refused_413_while_memory_stays_flat(
    server, credentials, tmp_uploads: Path, path: str, auth: str, chunked: bool
) -> None:
    headers = {"Content-Type": f"multipart/form-data; boundary={BOUNDARY}",
               "Cookie": credentials["cookie"]}
    if auth == "token":
        headers = {"Content-Type": headers["Content-Type"],
                   "Authorization": f"Token {credentials['token']}"}
    # Warm up: the first request imports the views, which is not the upload's memory.
    warm = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    warm.request("GET", "/datasets/upload/", headers={"Cookie": credentials["cookie"]})
    assert warm.getresponse().status == 200
    warm.close()
    before_media = media_files()
    before = server.rss_bytes()

    started = time.monotonic()
    with Peak(server) as peak:
        status, body, sent = stream_upload(server.port, path, headers, chunked=chunked)
    elapsed = time.monotonic() - started

    assert status == 413, body[:500]
    text = body.decode()
    assert "the limit of 100 MB" in text or "the limit is 100 MB" in text
    assert "Nothing was stored" in text
    if path.startswith("/api/"):
        assert text.startswith("{")
    assert sent < GIB / 2, f"the server read {sent} bytes before answering"
    assert peak.peak - before < MAX_GROWTH, (
        f"web processes grew by {(peak.peak - before) / 2**20:.0f} MB in {elapsed:.1f} s"
    )
    # Nothing left behind: no spooled upload, no staged file, no dataset.
    assert list(tmp_uploads.rglob("*.upload*")) == []
    assert media_files() == before_media
    assert not Dataset.objects.exists()
    # The server still serves the next request normally.
    after = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    after.request("GET", "/healthz")
    assert after.getresponse().status == 200
    after.close()


def test_a_chunked_upload_within_the_limit_is_read_in_full(server, credentials) -> None:
    """De-chunking must not cut off a body that is allowed: the form sees the whole file."""
    headers = {"Content-Type": f"multipart/form-data; boundary={BOUNDARY}",
               "Authorization": f"Token {credentials['token']}"}
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    conn.putrequest("POST", "/api/datasets/")
    for key, value in headers.items():
        conn.putheader(key, value)
    conn.putheader("Transfer-Encoding", "chunked")
    conn.endheaders()
    rows = b"".join(
        b"Title %d about the heart,Abstract %d about cardiac outcomes,%s\r\n"
        % (i, i, b"cardiovascular" if i % 2 else b"neurological")
        for i in range(200)
    )
    for piece in (HEAD, rows, TAIL):
        conn.send(b"%x\r\n%s\r\n" % (len(piece), piece))
    conn.send(b"0\r\n\r\n")
    response = conn.getresponse()
    body = response.read()
    conn.close()
    assert response.status == 202, body[:500]
    # The worker's step, run here: it parses the staged file the request stored.
    assert import_run_last().status == "completed"
    assert Dataset.objects.get().row_count == 200
