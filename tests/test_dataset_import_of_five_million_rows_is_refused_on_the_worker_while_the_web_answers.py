"""A 5,000,000-row CSV (66 MB) sent to the real web server is stored and queued at once; the
worker refuses it at row 2,000,001 (DATASET_MAX_ROWS, its default) with the message every door
gives, keeps nothing, and stays within its memory bound, while the web keeps answering from the
upload to the end: 19 requests in 20 within a quarter of a second, every one within two."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import psutil
import pytest
import requests

from api.tokens import token_create
from dataset_management.models import Dataset, ImportJob
from tests.import_support import import_wait, start_default_worker
from tests.plugins.datasets import media_files

pytestmark = pytest.mark.worker

ROWS = 5_000_000
OVER_CAP = ("This file has more than 2,000,000 rows (DATASET_MAX_ROWS); split it or raise the "
            "cap. Reading stopped at row 2,000,001 (line 2,000,002).")
# The web is never blocked by the upload or the import (either takes a minute or more): 19 in
# 20 answers within a quarter of a second, and none past two seconds. A bound of one second on
# the single slowest of several hundred answers once failed at 1.08 s, on a machine whose other
# CI lane was running beside it.
TYPICAL_SECONDS, WORST_SECONDS = 0.25, 2.0


def five_million_rows(path: Path) -> Path:
    with path.open("w") as out:
        out.write("title,abstract,label\n")
        for start in range(0, ROWS, 100_000):
            out.write("".join(f"t{i % 10},w{i},{'ab'[i % 2]}\n"
                              for i in range(start, start + 100_000)))
    return path


class Probe(threading.Thread):
    """Asks the web for /healthz and for the import (a database read) every 0.1 s, keeping the
    slowest answer of each, until stopped."""

    def __init__(self, base: str, key: str) -> None:
        super().__init__(daemon=True)
        self.base, self.key = base, key
        self.import_id: int | None = None
        self.slowest: dict[str, float] = {"healthz": 0.0, "import": 0.0}
        self.seconds: list[float] = []
        self.answers = 0
        self.halt = threading.Event()

    def ask(self, name: str, path: str) -> None:
        started = time.perf_counter()
        answer = requests.get(self.base + path, timeout=10,
                              headers={"Authorization": f"Token {self.key}"})
        assert answer.status_code == 200, (path, answer.status_code)
        took = time.perf_counter() - started
        self.slowest[name] = max(self.slowest[name], took)
        self.seconds.append(took)
        self.answers += 1

    def run(self) -> None:
        while not self.halt.is_set():
            self.ask("healthz", "/healthz")
            if self.import_id is not None:
                self.ask("import", f"/api/datasets/imports/{self.import_id}/")
            time.sleep(0.1)


def worker_rss(pid: int) -> int:
    process = psutil.Process(pid)
    return sum(p.memory_info().rss for p in (process, *process.children(recursive=True)))


def test_five_million_rows_are_refused_over_the_cap_while_the_web_keeps_answering(
    start_app_server, start_worker, user, tmp_path: Path
) -> None:
    csv_path = five_million_rows(tmp_path / "five_million.csv")
    before = media_files()  # earlier tests' files may share the folder the server writes to
    server = start_app_server()
    worker = start_default_worker(start_worker)
    _, key = token_create(user=user, name="probe")
    probe = Probe(server.url, key)
    probe.start()
    peak = 0
    try:
        started = time.perf_counter()
        with csv_path.open("rb") as handle:
            answer = requests.post(f"{server.url}/api/datasets/", files={"file": handle},
                                   data={"name": "Five million"}, timeout=60,
                                   headers={"Authorization": f"Token {key}"})
        accepted_after = time.perf_counter() - started
        assert answer.status_code == 202, answer.text
        probe.import_id = answer.json()["id"]

        def watched(job: ImportJob) -> bool:
            nonlocal peak
            peak = max(peak, worker_rss(worker.pid))
            return job.status in ("completed", "failed", "cancelled")

        job = import_wait(probe.import_id, timeout=600, until=watched)
    finally:
        probe.halt.set()
        probe.join(timeout=15)
    print(f"\n202 after {accepted_after:.1f} s; worker peak {peak / 2**20:.0f} MB; slowest "
          f"answers {probe.slowest}; {probe.answers} answers")
    assert job.status == "failed"
    assert job.reason == OVER_CAP
    assert job.rows_read == 2_000_000
    assert not Dataset.objects.exists()
    left = {p for p in media_files() - before if not p.startswith("staging/")}
    assert not left, left
    assert probe.answers > 50
    typical = sorted(probe.seconds)[int(0.95 * len(probe.seconds)) - 1]
    assert typical < TYPICAL_SECONDS, (typical, probe.slowest)
    assert max(probe.slowest.values()) < WORST_SECONDS, probe.slowest
    # Measured: 390 MB (an idle threaded worker is ~280 MB); 705 MB while the duplicate search
    # kept a dict entry per row, which this bound now refuses.
    assert peak < 600 * 2**20, f"worker peak {peak / 2**20:.0f} MB"
