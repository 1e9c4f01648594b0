"""Import a generated ~200 MB CSV through `manage.py import_dataset` and report time and memory.

    .venv/bin/python scripts/benchmark_ingest.py [--size-mb 200] [--keep]

Everything happens in a temp dir (its own SQLite DB and MEDIA_ROOT). Peak memory is the
importing process's own ru_maxrss (os.wait4 on that child), not this script's. Last line: JSON.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "demo_data" / "medlit_challenge.csv"


def make_csv(path: Path, size_mb: int) -> int:
    """Demo rows, each made unique (so duplicate tracking is exercised at its worst)."""
    with DEMO.open(encoding="utf-8-sig", newline="") as f:
        rows = list(csv.reader(f, delimiter=";"))[1:]
    target = size_mb * 1024 * 1024
    n = 0
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out, delimiter=";")
        writer.writerow(["title", "abstract", "group"])
        while out.tell() < target:
            title, abstract, group = rows[n % len(rows)]
            writer.writerow([f"{title} [{n}]", abstract, group])
            n += 1
    return n


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mb", type=int, default=200)
    parser.add_argument("--keep", action="store_true", help="keep the temp dir")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="medlitbot-bench-"))
    env = dict(os.environ, USE_SQLITE="True", SQLITE_PATH=str(tmp / "db.sqlite3"),
               MEDIA_ROOT=str(tmp / "media"), DJANGO_SETTINGS_MODULE="medlitbot_project.settings",
               MAX_UPLOAD_SIZE_MB=str(max(250, args.size_mb + 10)), LOG_LEVEL="WARNING")
    env.pop("DATABASE_URL", None)
    try:
        csv_path = tmp / "big.csv"
        t0 = time.perf_counter()
        rows = make_csv(csv_path, args.size_mb)
        size = csv_path.stat().st_size
        print(f"generated {size / 2**20:.1f} MB, {rows} rows in {time.perf_counter() - t0:.1f} s")
        manage = [sys.executable, str(ROOT / "manage.py")]
        subprocess.run([*manage, "migrate", "-v0"], cwd=ROOT, env=env, check=True)
        # Every dataset belongs to someone's project: the import needs a person to own it.
        subprocess.run([*manage, "shell", "-c", "from django.contrib.auth import get_user_model; "
                        "get_user_model().objects.create_user('bench')"],
                       cwd=ROOT, env=env, check=True)
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [*manage, "import_dataset", str(csv_path), "--name", "Benchmark", "--owner", "bench"],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )
        output = proc.stdout.read().decode()
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        print(output.rstrip())
        if proc.returncode != 0:
            raise SystemExit(f"import failed with exit code {proc.returncode}")
        peak_mb = usage.ru_maxrss / 1024  # kilobytes on Linux
        result = {
            "file_mb": round(size / 2**20, 1), "rows": rows, "seconds": round(seconds, 1),
            "rows_per_s": round(rows / seconds), "mb_per_s": round(size / 2**20 / seconds, 1),
            "peak_rss_mb": round(peak_mb, 1),
            "peak_rss_vs_file": round(peak_mb / (size / 2**20), 2),
        }
        print(f"imported {rows} rows in {seconds:.1f} s ({result['rows_per_s']} rows/s), "
              f"peak RSS {peak_mb:.0f} MB for a {size / 2**20:.0f} MB file")
        print(json.dumps(result))
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
