"""How long confirming a near match takes on a collection of N articles (web request time: the
confirm runs in the request), beside the collection's own import in the same run.

    .venv/bin/python scripts/benchmark_near_matches.py [--articles 10000] [--pairs 20]

A RIS export of N distinct articles is written with `--pairs` planted near matches (the same
title, another year); it is imported as a collection (collection_create, the baseline), then one
pair is confirmed (near_matches_decide: a new version written from the stored rows) and one
split (the report updated in place). Its own SQLite database and MEDIA_ROOT in a temp dir.
Decision (issue 29): a confirm over 1 s on 10k articles is to run as a job. Last line: JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def write_ris(path: Path, articles: int, pairs: int) -> None:
    with path.open("w", encoding="utf-8") as out:
        for i in range(articles):
            out.write(f"TY  - JOUR\nTI  - Study number {i} of heart and tumour outcomes\n"
                      f"AB  - An abstract of study {i} with some words about its results.\n"
                      f"AU  - Author{i}, A\nPY  - 2020\nER  - \n\n")
        for i in range(pairs):  # the same title, another year and author: near matches
            out.write(f"TY  - JOUR\nTI  - Study number {i} of heart and tumour outcomes\n"
                      f"AB  - Another abstract {i}.\nAU  - Other{i}, B\nPY  - 2011\nER  - \n\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--articles", type=int, default=10_000)
    parser.add_argument("--pairs", type=int, default=20)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="medlitbot-near-bench-"))
    os.environ.update(DJANGO_SETTINGS_MODULE="medlitbot_project.settings", DATABASE_URL="",
                      SQLITE_PATH=str(tmp / "db.sqlite3"), MEDIA_ROOT=str(tmp / "media"),
                      LOG_DIR=str(tmp / "logs"), SECRET_KEY="bench", DEBUG="True",
                      LOG_LEVEL="WARNING")
    (tmp / "logs").mkdir()
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from dataset_management.collection import (
        COUNTS_KEY,
        collection_create,
        near_matches_decide,
    )
    from dataset_management.collection_merge import Source
    from projects.services import project_create

    call_command("migrate", verbosity=0)
    user = get_user_model().objects.create_user("bench")
    project = project_create(user=user, name="Bench")
    export = tmp / "export.ris"
    write_ris(export, args.articles, args.pairs)
    started = time.perf_counter()
    dataset, _ = collection_create(owner=user, project=project.pk, name="Bench",
                                   sources=[Source(path=export, name="export.ris")],
                                   unlabelled=True)
    import_seconds = time.perf_counter() - started
    found = len(dataset.report[COUNTS_KEY]["near_matches"])
    started = time.perf_counter()
    near_matches_decide(dataset=dataset, decisions={0: "split"}, user=user)
    split_seconds = time.perf_counter() - started
    started = time.perf_counter()
    version = near_matches_decide(dataset=dataset, decisions={1: "merge"}, user=user)
    merge_seconds = time.perf_counter() - started
    result = {"articles": dataset.row_count, "near_matches": found,
              "import_s": round(import_seconds, 2), "split_s": round(split_seconds, 3),
              "confirm_s": round(merge_seconds, 2),
              "confirm_vs_import": round(merge_seconds / import_seconds, 2),
              "version_rows": version.row_count}
    print(f"collection of {dataset.row_count:,} articles imported in {import_seconds:.2f} s; "
          f"a split {split_seconds * 1000:.0f} ms; a confirm (new version) {merge_seconds:.2f} s "
          f"({merge_seconds / import_seconds:.2f}x the import)")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
