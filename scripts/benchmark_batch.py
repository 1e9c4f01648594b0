"""Batch throughput a user can plan with: abstracts per second, end to end, on a PubMed-sized file.

    .venv/bin/python scripts/benchmark_batch.py [--rows 10000] [--model-dir DIR] [--sides ...]

A CSV of --rows demo-like abstracts (the challenge's rows, repeated in order, with title and
abstract columns like a PubMed export) is classified by the inference worker's own code
(classification.batches.runner.batch_job_run, in this process: read the file, classify in
chunks, write the result CSV and the JSON Lines beside it), against a scratch SQLite database
and media folder. Sides:

  tfidf         tfidf_logreg trained here on the demo split
  minilm fp32   a fine-tuned MiniLM on the standard path, forced to fp32
  minilm        the same on the standard path in the device plan's dtype (bf16 on a CPU with
                native bf16; skipped where that is fp32)
  minilm fast   the same on the int8 fast path (taken by batches when the model's verdict says
                so; measured here whatever the verdict, which is printed)

Also printed: how much padding is left (padded tokens over real ones) when the runner's calls
of 64 texts come in file order, and when a window of 256 or 1,024 articles is sorted by length
first (classification.batches.packing, which the runner does with 1,024). The MiniLM comes
from --model-dir (an engine artifact) or is fine-tuned here for one epoch on 1,200 demo rows.
Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _bench_common as common
from benchmark_web import configure_env

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data" / "medlit_challenge" / "train.csv"


def write_articles(path: Path, rows: int) -> int:
    """--rows articles as a semicolon CSV (title;abstract), cycling through the real ones."""
    data = common.read_challenge_csv(SHARED if SHARED.is_file() else common.DEMO_CSV)
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out, delimiter=";")
        writer.writerow(["title", "abstract"])
        for i in range(rows):
            title, _, abstract = data.texts[i % len(data)].partition("\n\n")
            writer.writerow([title, abstract])
    return len(data)


def padding_overhead(tokenizer: Any, texts: list[str], max_length: int, window: int) -> float:
    """Padded tokens over real tokens when each window of texts is length-packed into calls
    (classification.batches.packing; window=CALL is no packing: calls in file order) and each
    call is cut into batches as the engine cuts them (batching.length_sorted_batches)."""
    from classification.batches.packing import length_packed
    from classification.engine.batching import length_sorted_batches

    real = padded = 0
    for start in range(0, len(texts), window):
        part = texts[start:start + window]
        for call in length_packed(part):
            encoded, batches = length_sorted_batches(tokenizer, [part[i] for i in call],
                                                      max_length)
            lengths = [len(ids) for ids in encoded["input_ids"]]
            real += sum(lengths)
            padded += sum(len(b) * max(lengths[i] for i in b) for b in batches)
    return padded / real - 1.0


def with_fast_path(source: Path, target: Path, *, used: bool) -> Path:
    shutil.copytree(source, target)
    manifest = json.loads((target / "manifest.json").read_text())
    manifest["fast_path"] = {**manifest.get("fast_path", {}), "used": used}
    (target / "manifest.json").write_text(json.dumps(manifest))
    return target


def setup_django(scratch: Path) -> None:
    import os
    import subprocess

    env = configure_env(scratch, None)
    os.environ.update(env)
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
                   cwd=ROOT, env=env, check=True)
    import django

    django.setup()


def model_row(owner: Any, artifact: Path, name: str) -> Any:
    from classification.engine.artifacts import read_manifest
    from classification.models import MLModel

    manifest = read_manifest(str(artifact))
    return MLModel.objects.create(
        owner=owner, name=name, model_type=manifest["model_type"],
        status=MLModel.Status.TRAINED, artifact_path=str(artifact),
        label_names=manifest["label_names"], is_multilabel=manifest["multi_label"],
    )


def run_batch(owner: Any, ml_model: Any, source: Path) -> dict[str, Any]:
    from classification.batches import storage
    from classification.batches.runner import batch_job_run
    from classification.models import BatchJob

    batch = BatchJob(owner=owner, ml_model=ml_model, filename=source.name)
    folder = storage.batch_folder(owner_id=owner.pk, batch_id=batch.pk)

    def write(out: Any) -> None:
        with source.open("rb") as handle:
            shutil.copyfileobj(handle, out)

    batch.input_path = storage.relative(storage.input_store(folder=folder,
                                                            filename=source.name, write=write))
    batch.save(force_insert=True)
    started = time.perf_counter()
    status = batch_job_run(batch_id=batch.pk)
    seconds = time.perf_counter() - started
    batch.refresh_from_db()
    if status != "completed":
        raise SystemExit(f"batch ended {status}: {batch.reason}")
    csv_mb = storage.absolute(batch.result_path).stat().st_size / 1e6
    storage.remove_folder(folder)
    return {"seconds": seconds, "processed": batch.processed,
            "articles_per_second": batch.processed / seconds, "csv_mb": csv_mb}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--model-dir", default=None)
    parser.add_argument("--sides", default="tfidf,minilm fp32,minilm,minilm fast")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    wanted = [s.strip() for s in args.sides.split(",") if s.strip()]

    import psutil

    scratch = Path(tempfile.mkdtemp(prefix="medlitbot-batch-"))
    setup_django(scratch)
    from django.contrib.auth import get_user_model

    from classification.ml_models import (
        TrainConfig,
        create_classifier,
        get_cached_classifier,
        load_classifier,
    )

    source = scratch / "pubmed-export.csv"
    distinct = write_articles(source, args.rows)
    owner = get_user_model().objects.create_user("bench", password="x")

    artifacts = scratch / "artifacts"
    train, val, _ = common.load_split(None, None, args.seed)
    tfidf = create_classifier("tfidf_logreg")
    tfidf.fit(train, val, TrainConfig(), lambda e: None, lambda: False)
    tfidf.save(str(artifacts / "tfidf"))
    if args.model_dir:
        minilm_dir = Path(args.model_dir)
    else:
        from benchmark_inference import train_quick_model

        minilm_dir = Path(train_quick_model(scratch, args.seed, 1500))
    minilm = load_classifier(str(minilm_dir))
    print(f"this MiniLM's own verdict: fast path {'used' if minilm.fast_path_used else 'not used'}"
          f" for batches: {minilm.fast_path.get('reason')}")
    # Each side gets a copy of the artifact with the verdict set, so each measures its path.
    standard_dir = with_fast_path(minilm_dir, artifacts / "minilm-standard", used=False)
    fast_dir = with_fast_path(minilm_dir, artifacts / "minilm-fast", used=True)
    plan_dtype = minilm.device_plan.dtype
    texts = [article for article in common.read_challenge_csv(
        SHARED if SHARED.is_file() else common.DEMO_CSV).texts]
    from classification.batches.packing import CALL, WINDOW

    overhead = {window: padding_overhead(minilm.tokenizer, texts, minilm.max_length, window)
                for window in (CALL, 256, WINDOW)}
    print(f"rows={args.rows} ({distinct} distinct abstracts, repeated) threads="
          f"{minilm.device_plan.threads} plan dtype={plan_dtype} "
          f"load={psutil.getloadavg()[0]:.1f}")
    print(f"padded tokens over real ones, calls of {CALL} packed by length within windows of: "
          + ", ".join(f"{w}: {value * 100:.1f}%" for w, value in overhead.items())
          + f" ({CALL} = file order, no packing; the runner's window is {WINDOW})")

    rows = {
        "tfidf": model_row(owner, artifacts / "tfidf", "tfidf"),
        "minilm fp32": model_row(owner, standard_dir, "minilm fp32"),
        "minilm": model_row(owner, standard_dir, "minilm"),
        "minilm fast": model_row(owner, fast_dir, "minilm fast"),
    }
    if plan_dtype == "float32":
        wanted = [w for w in wanted if w != "minilm"]
    results: dict[str, Any] = {}
    for side in wanted:
        if side.startswith("minilm") and side != "minilm fast":
            # The runner loads through the per-process cache: set the dtype this side measures.
            cached = get_cached_classifier(str(standard_dir))
            cached.device_plan.dtype = "float32" if side == "minilm fp32" else plan_dtype
        results[side] = run_batch(owner, rows[side], source)
        print(f"{side:12s} {results[side]['articles_per_second']:8.1f} articles/s "
              f"({results[side]['seconds']:.1f} s for {results[side]['processed']})", flush=True)
    base = results.get("minilm fp32", {}).get("articles_per_second")
    if base:
        for figures in results.values():
            figures["ratio_vs_minilm_fp32"] = figures["articles_per_second"] / base
        print("against minilm fp32: " + ", ".join(
            f"{side} {figures['ratio_vs_minilm_fp32']:.2f}x" for side, figures in results.items()))
    print(json.dumps({"rows": args.rows, "plan_dtype": plan_dtype,
                      "load_average": psutil.getloadavg()[0],
                      "padding_overhead": {str(k): v for k, v in overhead.items()},
                      "window": WINDOW, "call": CALL, "sides": results}))
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
