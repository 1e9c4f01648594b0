"""With SENTRY_DSN set, an unhandled error in a view and in a Celery task reaches Sentry, named by
its exception type; without it, nothing is sent. The DSN points at a small HTTP server in this
test that stands in for Sentry and keeps every event it is sent."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Runs in a fresh process, so the settings read SENTRY_DSN at start as in production. The view
# and the task are the app's own kinds of entry point; each raises an error of its own type.
FAILING_VIEW_AND_TASK = """
import django, sentry_sdk
django.setup()
from celery import shared_task
from django.test import Client, override_settings
from django.urls import path

class ViewFailed(Exception):
    pass

class TaskFailed(Exception):
    pass

def broken(request):
    abstract = request.POST["abstract"]
    raise ViewFailed("a view that fails on " + str(len(abstract)) + " characters")

urlpatterns = [path("broken/", broken)]

@shared_task(name="tests.broken_task")
def broken_task():
    raise TaskFailed("a task that fails")

with override_settings(ROOT_URLCONF=__name__, ALLOWED_HOSTS=["testserver"]):
    status = Client(raise_request_exception=False).post(
        "/broken/", {"abstract": "Stenting outcomes in patient 4711"}).status_code
broken_task.apply()
sentry_sdk.flush(timeout=10)
print(status, sentry_sdk.get_client().is_active())
"""


class Envelopes(BaseHTTPRequestHandler):
    received: list[dict[str, Any]]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        # An envelope: a header line, then each item's header line and its payload line.
        for line in body.splitlines()[1:]:
            try:
                item = json.loads(line)
            except ValueError:
                continue
            if "exception" in item:
                self.received.append(item)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def sentry_stand_in() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    received: list[dict[str, Any]] = []
    handler = type("Handler", (Envelopes,), {"received": received})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://publickey@127.0.0.1:{server.server_port}/1", received
    finally:
        server.shutdown()
        server.server_close()


def run_app(**env: str) -> str:
    clean = {k: v for k, v in os.environ.items()
             if k != "SENTRY_DSN" and not k.lower().endswith("_proxy")}
    clean.update(DJANGO_SETTINGS_MODULE="medlitbot_project.settings_test", **env)
    done = subprocess.run([sys.executable, "-c", FAILING_VIEW_AND_TASK], cwd=ROOT, env=clean,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def exception_types(events: list[dict[str, Any]]) -> set[str]:
    return {value["type"] for event in events for value in event["exception"]["values"]}


def test_a_failing_view_and_task_are_sent_with_their_exception_types(sentry_stand_in) -> None:
    dsn, received = sentry_stand_in
    assert run_app(SENTRY_DSN=dsn) == "500 True"
    assert {"ViewFailed", "TaskFailed"} <= exception_types(received)
    by_type = {value["type"]: (event, value) for event in received
               for value in event["exception"]["values"]}
    # Caught by the Django and the Celery integrations, not by a logging handler.
    assert by_type["ViewFailed"][1]["mechanism"]["type"] == "django"
    assert by_type["TaskFailed"][1]["mechanism"]["type"] == "celery"
    # Nothing of the data leaves the install: no local variables (abstracts, labels), no
    # request body, cookies or user.
    for event, value in by_type.values():
        assert not any("vars" in frame for frame in value["stacktrace"]["frames"])
        assert "user" not in event
        assert "cookies" not in event.get("request", {})
    assert "patient 4711" not in json.dumps(received)


def test_without_a_dsn_sentry_is_never_started() -> None:
    assert run_app() == "500 False"
