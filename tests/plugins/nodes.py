"""Several machines on one box: an S3-compatible endpoint, and nodes that share nothing else.

Each node gets its own MEDIA_ROOT, MODEL_ARTIFACT_ROOT, file cache and NODE_NAME; nodes share only
PostgreSQL, Redis and the S3 endpoint (moto's standalone server, which speaks the S3 HTTP
protocol that boto3 uses against AWS or MinIO).
"""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.plugins.server import free_port
from tests.plugins.worker import ROOT

CREDENTIALS = {"AWS_ACCESS_KEY_ID": "medlitbot-test", "AWS_SECRET_ACCESS_KEY": "medlitbot-test",
               "AWS_S3_REGION_NAME": "us-east-1"}


class S3Endpoint:
    def __init__(self, log_path: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.bucket = f"medlitbot-{uuid.uuid4().hex[:8]}"
        self.log_path = log_path
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 30.0) -> S3Endpoint:
        self.proc = subprocess.Popen(
            [str(Path(sys.executable).parent / "moto_server"), "-H", "127.0.0.1",
             "-p", str(self.port)],
            cwd=ROOT, stdout=self.log_path.open("ab"), stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"{self.url}/moto-api/", timeout=1)
                break
            except OSError:
                if self.proc.poll() is not None:
                    raise RuntimeError(self.log_path.read_text(errors="replace")) from None
                time.sleep(0.2)
        self.client().create_bucket(Bucket=self.bucket)
        return self

    def client(self) -> Any:
        import boto3

        return boto3.client("s3", endpoint_url=self.url,
                            aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
                            aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
                            region_name=CREDENTIALS["AWS_S3_REGION_NAME"])

    def object_names(self) -> list[str]:
        pages = self.client().get_paginator("list_objects_v2").paginate(Bucket=self.bucket)
        return [item["Key"] for page in pages for item in page.get("Contents", [])]

    def node_env(self, *, name: str, root: Path) -> dict[str, str]:
        """Settings of one simulated machine: its own disk, the shared bucket."""
        return {
            "NODE_NAME": name,
            "MEDIA_ROOT": str(root / "media"),
            "MODEL_ARTIFACT_ROOT": str(root / "artifacts"),
            "FILE_CACHE_DIR": str(root / "cache"),
            "LOG_DIR": str(root / "logs"),
            "SHARED_STORAGE_URL": f"s3://{self.bucket}/medlitbot",
            "AWS_S3_ENDPOINT_URL": self.url,
            **CREDENTIALS,
        }

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)


@pytest.fixture
def s3_endpoint(tmp_path: Path) -> Iterator[S3Endpoint]:
    endpoint = S3Endpoint(tmp_path / "moto.log").start()
    yield endpoint
    endpoint.stop()


@pytest.fixture
def shared_storage(settings: Any, tmp_path: Path) -> Path:
    """This process as one node of several, sharing a folder (SHARED_STORAGE_URL=file://...):
    core.filestore's own code path, without an S3 server."""
    bucket = tmp_path / "bucket"
    settings.STORAGES = {**settings.STORAGES, "shared": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(bucket), "allow_overwrite": True}}}
    settings.SHARED_STORAGE_URL = f"file://{bucket}"
    settings.MEDIA_ROOT = str(tmp_path / "media")
    settings.FILE_CACHE_DIR = str(tmp_path / "cache")
    return bucket
