"""How long deduplication and the near-match list take on a collection of N records, and the
memory they need (issue 38: under 2 minutes and under 1 GB for 100,000 records).

    nice -n 10 .venv/bin/python scripts/benchmark_near_matches.py [--records 100000]
        [--duplicates 10000] [--near 2000] [--apply]

Records are built from the demo data (demo_data/medlit_challenge.csv, 2,855 real articles):
each distinct article is a demo article with a cohort number in its title and abstract, so
100,000 are all different. Planted: `--duplicates` copies as a colleague's CSV (the same title
and abstract, no year, no DOI: to be merged with no one asked), and `--near` copies four years
later, half with one word added to the abstract (the "high" band), half with another article's
abstract (the "low" band): to be listed, never merged. The articles and near copies are a RIS
file with years and DOIs. A low-band copy holds its other article's abstract word for word, so
the abstract rule pairs it with that article too (kept apart by their DOIs): more pairs are
listed than planted (2,528 for the default 2,000).

Phases, each timed, in one process with its own SQLite database and MEDIA_ROOT:
1. dedup: collection_merge over both files (the matcher, the three passes, the merged file);
2. import: collection_create, the whole collection as the worker makes it (merge again,
   validation, splits, the rows file): for scale, not part of the target;
3. listing: the near-match page's work: the bands with their counts and the first page's
   pairs read from the rows file;
4. with --apply: "merge all in the high band, keep the low apart" as one new version.
Wall-clock seconds are what the target is about; dedup's CPU seconds are given too, since on a
shared machine the wall clock also counts the other processes' turns. Peak memory is the
process's maximum resident set (ru_maxrss) after phase 1 and after phase 3 (the import's own
peak included). Last line: JSON.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DEMO = ROOT / "demo_data" / "medlit_challenge.csv"


def demo_articles() -> list[tuple[str, str]]:
    with DEMO.open(encoding="utf-8-sig", newline="") as handle:
        return [(" ".join(r["title"].split()), " ".join(r["abstract"].split()))
                for r in csv.DictReader(handle, delimiter=";") if r["title"] and r["abstract"]]


def article(demo: list[tuple[str, str]], i: int) -> tuple[str, str]:
    title, abstract = demo[i % len(demo)]
    cohort = i // len(demo)
    return f"{title} (cohort {cohort})", f"{abstract} Cohort {cohort} of this series."


def ris(title: str, abstract: str, year: int, doi: str) -> str:
    return f"TY  - JOUR\nTI  - {title}\nAB  - {abstract}\nPY  - {year}\nDO  - {doi}\nER  - \n\n"


def write_files(folder: Path, *, records: int, duplicates: int, near: int) -> tuple[Path, Path]:
    demo = demo_articles()
    distinct = records - duplicates - near
    search, colleague = folder / "search.ris", folder / "colleague.csv"
    with search.open("w", encoding="utf-8") as out:
        for i in range(distinct):
            title, abstract = article(demo, i)
            out.write(ris(title, abstract, 2010 + i % 10, f"10.5555/bench.{i}"))
        for n in range(near):  # the first `near` articles again, four years later
            title, abstract = article(demo, n)
            # Odd ones: another article's abstract (low band); even: one word added (high).
            abstract = article(demo, distinct - 1 - n)[1] if n % 2 else "Revised. " + abstract
            out.write(ris(title, abstract, 2014 + n % 10, f"10.5555/bench.near.{n}"))
    with colleague.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["title", "abstract"])
        for n in range(duplicates):  # spread over the articles the near copies do not touch
            writer.writerow(article(demo, near + (n * 7) % (distinct - near)))
    return search, colleague


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def django_setup(tmp: Path) -> None:
    os.environ.update(DJANGO_SETTINGS_MODULE="medlitbot_project.settings", DATABASE_URL="",
                      SQLITE_PATH=str(tmp / "db.sqlite3"), MEDIA_ROOT=str(tmp / "media"),
                      LOG_DIR=str(tmp / "logs"), SECRET_KEY="bench", DEBUG="True",
                      LOG_LEVEL="WARNING")
    (tmp / "logs").mkdir()
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def main() -> None:
    parser = argparse.ArgumentParser(
        description="Time deduplication and the near-match list of a collection of N records "
                    "(issue 38's target: 100,000 in under 2 minutes and 1 GB). The module's "
                    "docstring describes the records and the phases.")
    parser.add_argument("--records", type=int, default=100_000,
                        help="records in all, over both files (default: %(default)s)")
    parser.add_argument("--duplicates", type=int, default=10_000,
                        help="of them, copies in a CSV without year or DOI, to be merged with "
                             "no one asked (default: %(default)s)")
    parser.add_argument("--near", type=int, default=2_000,
                        help="of them, copies four years later, half almost the same text, half "
                             "another article's abstract: listed, never merged (default: "
                             "%(default)s)")
    parser.add_argument("--apply", action="store_true",
                        help="also time 'merge all in the high band, keep the low apart' as "
                             "one new version")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="medlitbot-near-bench-"))
    search, colleague = write_files(tmp, records=args.records, duplicates=args.duplicates,
                                    near=args.near)
    django_setup(tmp)
    from django.contrib.auth import get_user_model

    from dataset_management.collection import COUNTS_KEY, collection_create
    from dataset_management.collection_merge import Source, collection_merge
    from dataset_management.readers import import_caps
    from projects.services import project_create

    sources = [Source(path=search, name=search.name), Source(path=colleague, name=colleague.name)]
    started, cpu = time.perf_counter(), time.process_time()
    merged = collection_merge(sources=sources, out=tmp / "merged.jsonl", caps=import_caps())
    dedup_s, dedup_cpu_s = time.perf_counter() - started, time.process_time() - cpu
    dedup_peak = peak_mb()

    user = get_user_model().objects.create_user("bench")
    project = project_create(user=user, name="Bench")
    started = time.perf_counter()
    dataset, _ = collection_create(owner=user, project=project.pk, name="Bench",
                                   sources=sources)
    import_s = time.perf_counter() - started
    listing_s, bands = listing(dataset)
    result = {
        "records": merged.identified, "articles": dataset.row_count,
        "duplicates_removed": merged.duplicates_removed, "merged_by": dict(merged.merged_by),
        "near_matches": len(merged.near), "bands": bands,
        "dedup_s": round(dedup_s, 2), "dedup_cpu_s": round(dedup_cpu_s, 2),
        "listing_s": round(listing_s, 3),
        "dedup_and_listing_s": round(dedup_s + listing_s, 2),
        "peak_mb_after_dedup": round(dedup_peak), "import_s": round(import_s, 2),
        "peak_mb_with_import_and_listing": round(peak_mb()),
    }
    if args.apply:
        result["apply_s"], result["version_rows"] = apply(dataset, user)
    print(f"{merged.identified:,} records: dedup {dedup_s:.1f} s (peak {dedup_peak:.0f} MB), "
          f"near-match list {listing_s * 1000:.0f} ms for {len(merged.near):,} pairs, "
          f"{merged.duplicates_removed:,} duplicates removed; whole import {import_s:.1f} s, "
          f"peak {result['peak_mb_with_import_and_listing']} MB")
    assert dataset.report[COUNTS_KEY]["near_matches_found"] == len(merged.near)
    print(json.dumps(result))


def listing(dataset: Any) -> tuple[float, dict[str, int]]:
    """The near-match page's work, as the view does it: bands, then page 1's pairs."""
    from dataset_management.collection import COUNTS_KEY, near_matches_read
    from dataset_management.near_review import near_bands_list

    started = time.perf_counter()
    pairs = dataset.report[COUNTS_KEY]["near_matches"]
    bands = near_bands_list(pairs=pairs, articles=dataset.row_count)
    shown = near_matches_read(dataset=dataset, pairs=[{**p, "index": i}
                                                      for i, p in enumerate(pairs[:20])])
    assert all(side.get("title") for pair in shown for side in pair["sides"])
    return time.perf_counter() - started, {band["name"]: band["count"] for band in bands}


def apply(dataset: Any, user: Any) -> tuple[float, int]:
    from dataset_management.collection import COUNTS_KEY, near_matches_decide
    from dataset_management.near_review import near_review_decisions

    pairs = dataset.report[COUNTS_KEY]["near_matches"]
    decisions = near_review_decisions(pairs=pairs, pair_choices={},
                                      band_choices={"high": "merge", "low": "split"})
    started = time.perf_counter()
    version = near_matches_decide(dataset=dataset, decisions=decisions, user=user)
    return round(time.perf_counter() - started, 2), version.row_count


if __name__ == "__main__":
    main()
