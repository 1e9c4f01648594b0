"""Export speed: 10,000 classified records as RIS, against the CSV a batch writes, same run.

    .venv/bin/python scripts/benchmark_export.py [--records 10000] [--repeats 5] [--csv PATH]

The records are real abstracts (../shared/data/medlit_challenge/train.csv when present, else
demo_data/medlit_challenge.csv), repeated until there are --records of them, written as a RIS
library (Zotero-like fields: TI, AB, AU, PY, JO, DO, AN + DB PubMed, KW, UR, an unknown tag),
read back with dataset_management.articles and classified by a TF-IDF model trained here. Then,
each --repeats times in turn (so a burst of load from other processes hits every format):

  csv         the batch CSV, row by row through csv_safe_cell (classification.batches.runner)
  ris         RIS from the export items: every original record, labels as KW, N1 note
  ris stored  RIS as a batch download makes it: read the stored JSON Lines, then RIS
  ris made    RIS for records that did not come from RIS (made from their fields)
  jsonl       the JSON Lines the batch runner stores

Times are the best of the repeats (the least disturbed); the ratio is RIS over CSV. Reading
and classifying are timed once, for scale. Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from classification.engine.data import read_challenge_csv  # noqa: E402
from classification.engine.types import TextData  # noqa: E402
from dataset_management.articles import articles_read  # noqa: E402
from dataset_management.export import (  # noqa: E402
    csv_safe_cell,
    jsonl_chunks,
    prediction_csv_header,
    prediction_csv_row,
    prediction_item,
    ris_chunks,
)

SHARED = ROOT.parent / "shared" / "data" / "medlit_challenge" / "train.csv"
DEMO = ROOT / "demo_data" / "medlit_challenge.csv"
PREFIX = "MedLitBot:"


def ris_library(data: TextData, records: int) -> str:
    lines: list[str] = []
    for i in range(records):
        j = i % len(data.texts)
        title, _, abstract = data.texts[j].partition("\n\n")
        lines += ["TY  - JOUR", f"TI  - {title} [{i}]", f"AU  - Author{i % 97}, Anne",
                  f"AU  - Writer{i % 89}, Ben", f"PY  - {1990 + i % 35}",
                  "JO  - Journal of Benchmarks", f"DO  - 10.5555/bench.{i}", "DB  - PubMed",
                  f"AN  - {30000000 + i}", *[f"KW  - {label}" for label in data.labels[j]],
                  f"UR  - https://example.org/{i}", f"XY  - unknown tag {i}",
                  f"AB  - {abstract}", "ER  - ", ""]
    return "\n".join(lines)


def best_of(repeats: int, tasks: dict[str, Callable[[], int]]) -> dict[str, dict[str, float]]:
    times: dict[str, list[float]] = {name: [] for name in tasks}
    sizes: dict[str, int] = {}
    for _ in range(repeats):
        for name, task in tasks.items():
            start = time.perf_counter()
            sizes[name] = task()
            times[name].append(time.perf_counter() - start)
    return {name: {"seconds": min(t), "mb": sizes[name] / 1e6} for name, t in times.items()}


def drain(chunks: Iterable[str]) -> int:
    out = io.StringIO()
    for piece in chunks:
        out.write(piece)
    return len(out.getvalue().encode("utf-8"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--csv", help="the labelled CSV to take abstracts from")
    args = parser.parse_args()
    source = Path(args.csv) if args.csv else (SHARED if SHARED.is_file() else DEMO)
    data = read_challenge_csv(source)

    from classification.ml_models import TrainConfig, create_classifier

    labels = sorted({name for row in data.labels for name in row})
    model = create_classifier("tfidf_logreg")
    model.fit(data, data, TrainConfig(label_names=labels, multi_label=True),
              lambda _: None, lambda: False)

    with tempfile.TemporaryDirectory(prefix="medlitbot-export-bench-") as tmp:
        path = Path(tmp) / "library.ris"
        path.write_text(ris_library(data, args.records), encoding="utf-8")
        start = time.perf_counter()
        with articles_read(path=path, filename=path.name, overrides={"unlabelled": True}) as a:
            articles = list(a)
        read_s = time.perf_counter() - start
        start = time.perf_counter()
        predictions = []
        for i in range(0, len(articles), 64):
            predictions += model.predict([x.text for x in articles[i:i + 64]])
        classify_s = time.perf_counter() - start
        items = [prediction_item(row=i, article=x, source_format="ris", prediction=p)
                 for i, (x, p) in enumerate(zip(articles, predictions, strict=True), start=1)]
        made = [item | {"source_format": "csv"} for item in items]
        stored = Path(tmp) / "result.jsonl"
        stored.write_text("".join(jsonl_chunks(items)), encoding="utf-8")

        def write_csv() -> int:
            out = io.StringIO()
            writer = csv.writer(out)
            writer.writerow(prediction_csv_header(label_names=labels, with_id=True))
            for item in items:
                row = prediction_csv_row(item, label_names=labels, with_id=True)
                writer.writerow([csv_safe_cell(cell) for cell in row])
            return len(out.getvalue().encode("utf-8"))

        def ris_stored() -> int:
            with stored.open(encoding="utf-8") as handle:
                return drain(ris_chunks((json.loads(line) for line in handle), prefix=PREFIX))

        results = best_of(args.repeats, {
            "csv": write_csv,
            "ris": lambda: drain(ris_chunks(items, prefix=PREFIX)),
            "ris stored": ris_stored,
            "ris made": lambda: drain(ris_chunks(made, prefix=PREFIX)),
            "jsonl": lambda: drain(jsonl_chunks(items)),
        })

    n = len(items)
    print(f"{n:,} records from {source} (read {read_s:.2f} s, classified {classify_s:.2f} s); "
          f"best of {args.repeats}:")
    print(f"{'format':<12}{'seconds':>9}{'records/s':>12}{'MB':>8}{'x CSV':>8}")
    csv_s = results["csv"]["seconds"]
    for name, r in results.items():
        print(f"{name:<12}{r['seconds']:>9.3f}{n / r['seconds']:>12,.0f}{r['mb']:>8.1f}"
              f"{r['seconds'] / csv_s:>8.2f}")
    print(json.dumps({"records": n, "source": str(source), "read_seconds": round(read_s, 3),
                      "classify_seconds": round(classify_s, 3),
                      **{f"{k.replace(' ', '_')}_seconds": round(v["seconds"], 4)
                         for k, v in results.items()},
                      "ris_over_csv": round(results["ris"]["seconds"] / csv_s, 2),
                      "ris_stored_over_csv": round(results["ris stored"]["seconds"] / csv_s, 2)}))


if __name__ == "__main__":
    main()
