#!/usr/bin/env python
"""The New model page's training-time estimate against the real duration, job after job.

Starts its own solo training worker (a scratch SQLite database, Redis DB 11), imports the demo
file and a half of it through the app's ingestion, then runs real training jobs one after the
other through training_job_create, as the page's Start button does. Before each job it computes
the estimate the page would show at that moment (classification.estimates: the registry's
speeds until this machine has finished a job of the type, then the measured ones), and after it
the job's real duration (started -> finished, as the job page shows it). Target: every
estimate within 2x of the actual. --tiny-bert adds two jobs of the custom kind on a 2-layer
BERT folder built on the spot (tests/tinybert.py), estimated by the folder's size as the search
estimates it. --figures computes, without training, what the page and a search's first trial
estimate at the given sizes (time_estimate.py: both are the same formula).

    .venv/bin/python scripts/benchmark_estimates.py [--skip-minilm] [--tiny-bert]
    .venv/bin/python scripts/benchmark_estimates.py --figures [--rows 1500] [--threads 2]

Last line: one JSON object with every job's estimate, actual and ratio.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "demo_data" / "medlit_challenge.csv"
QUICK = {"epochs": 1, "batch_size": 8, "max_length": 128, "learning_rate": 1e-4,
         "gradient_accumulation_steps": 2, "early_stopping_patience": 1}


def half_of_demo(target: Path) -> Path:
    with DEMO.open(encoding="utf-8-sig", newline="") as src:
        rows = list(csv.reader(src, delimiter=";"))
    with target.open("w", encoding="utf-8", newline="") as out:
        csv.writer(out, delimiter=";").writerows(rows[: 1 + (len(rows) - 1) // 2])
    return target


def start_worker(scratch: Path) -> subprocess.Popen[bytes]:
    from django.conf import settings

    log_path = scratch / "worker.log"
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "medlitbot_project", "worker", "--pool=solo",
         "--concurrency=1", "--without-gossip", "--without-mingle", "--loglevel=INFO",
         f"--queues={settings.QUEUE_TRAINING}"],
        cwd=ROOT, env=dict(os.environ), stdout=log_path.open("wb"), stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 120
    while " ready." not in log_path.read_text(errors="replace"):
        if time.monotonic() > deadline or worker.poll() is not None:
            raise SystemExit(f"worker did not start:\n{log_path.read_text(errors='replace')}")
        time.sleep(0.2)
    return worker


def page_estimate(dataset: Any, model_type: str, config: dict[str, Any]) -> float:
    """What the New model page shows for this choice right now (model_new.js's formula); for a
    custom folder, scaled by its size as a search scales it."""
    from classification.engine import model_size, time_estimate
    from classification.engine.registry import REGISTRY
    from classification.estimates import estimator_data
    from dataset_management.models import Dataset

    estimator, plan, _ = estimator_data(datasets=Dataset.objects.filter(pk=dataset.pk),
                                        presets={})
    data, spec = estimator["datasets"][str(dataset.pk)], REGISTRY[model_type]
    ratio = model_size.work_ratio(model_path=config.get("model_path"),
                                  reference=spec.speed.measured_on) \
        if spec.speed.measured_on else 1.0
    return time_estimate.estimate_seconds(
        spec=spec, train=data["sizes"]["train"], validation=data["sizes"]["validation"],
        test=data["sizes"]["test"], epochs=int(config.get("epochs", 3)),
        max_length=int(config.get("max_length", 256)), p95_words=data["p95_words"],
        rate=estimator["rates"][model_type], threads=int(plan.get("threads") or 1),
        device=str(plan.get("device", "cpu")), work_ratio=ratio)


def figures(*, rows: int, threads: int, p95_words: float) -> None:
    """The page's estimate and a search's first-trial estimate for MiniLM and its embedding
    kind at `rows` (80/10/10 splits), from the registry's figures; no training."""
    from classification.engine import search_estimates, time_estimate
    from classification.engine.device import DevicePlan
    from classification.engine.registry import REGISTRY
    from classification.engine.search_space import defaults

    train, val = rows * 8 // 10, rows // 10
    test = rows - train - val
    for key in ("minilm", "minilm_embed_logreg"):
        spec, settings = REGISTRY[key], defaults(REGISTRY[key])
        epochs, length = int(settings.get("epochs", 1)), int(settings.get("max_length", 256))
        page = time_estimate.estimate_seconds(
            spec=spec, train=train, validation=val, test=test, epochs=epochs,
            max_length=length, p95_words=p95_words,
            rate=spec.speed.samples_per_second_per_thread, threads=threads, device="cpu")
        trial = search_estimates.prior_seconds(
            spec=spec, settings=settings, device_plan=DevicePlan(device="cpu", threads=threads),
            rows=search_estimates.TrialRows(train=train, validation=val, p95_words=p95_words))
        print(json.dumps({"model_type": key, "train": train, "validation": val, "test": test,
                          "epochs": epochs, "max_length": length, "page_s": round(page, 1),
                          "search_first_trial_s": round(trial, 1)}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("--skip-minilm", action="store_true", help="TF-IDF and embeddings only")
    parser.add_argument("--tiny-bert", action="store_true", help="also a tiny custom BERT")
    parser.add_argument("--only", nargs="*", help="only these model types")
    parser.add_argument("--figures", action="store_true", help="estimates only, no training")
    parser.add_argument("--rows", type=int, default=1500)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--p95-words", type=float, default=250.0)
    args = parser.parse_args()
    if args.figures:
        sys.path.insert(0, str(ROOT))
        figures(rows=args.rows, threads=args.threads, p95_words=args.p95_words)
        return 0
    scratch = Path(tempfile.mkdtemp(prefix="medlitbot-estimates-"))
    os.environ.update(
        DJANGO_SETTINGS_MODULE="medlitbot_project.settings_test", MEDLITBOT_TEST_DIR=str(scratch),
        USE_SQLITE="True", SQLITE_PATH=str(scratch / "db.sqlite3"), TOKENIZERS_PARALLELISM="false",
        REDIS_URL="redis://127.0.0.1:6379/11",
    )
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    import redis
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.files import File
    from django.core.management import call_command

    from classification.jobs.lifecycle import training_job_create
    from classification.models import TrainingJob
    from dataset_management.services import dataset_create_from_upload

    call_command("migrate", verbosity=0)
    redis.Redis.from_url(settings.CELERY_BROKER_URL).flushdb()
    user = get_user_model().objects.create_user(f"estimates-{uuid.uuid4().hex[:6]}")
    datasets = {}
    for name, path in (("demo", DEMO), ("half", half_of_demo(scratch / "half.csv"))):
        with path.open("rb") as handle:
            datasets[name] = dataset_create_from_upload(
                owner=user, uploaded_file=File(handle, name=path.name), name=name)
    plan: list[tuple[str, str, dict[str, Any]]] = [
        ("tfidf_logreg", "half", {}), ("tfidf_logreg", "demo", {}),
        ("tfidf_svm", "demo", {}), ("minilm_embed_logreg", "half", {}),
        ("minilm_embed_logreg", "demo", {}),
    ]
    if not args.skip_minilm:
        plan += [("minilm", "half", QUICK), ("minilm", "demo", QUICK)]
    if args.tiny_bert:
        from tests.tinybert import build_tiny_bert

        folder = str(build_tiny_bert(scratch / "tiny-bert"))
        user.is_staff = True
        user.save(update_fields=["is_staff"])
        plan += [("custom", "half", {**QUICK, "model_path": folder}),
                 ("custom", "demo", {**QUICK, "model_path": folder})]
    if args.only:
        plan = [step for step in plan if step[0] in args.only]
    worker = start_worker(scratch)
    results = []
    try:
        for model_type, data_name, config in plan:
            dataset = datasets[data_name]
            estimate = page_estimate(dataset, model_type, config)
            job = training_job_create(owner=user, dataset=dataset, model_type=model_type,
                                      name=f"{model_type} on {data_name}", config=config)
            while True:
                job.refresh_from_db()
                if not job.is_active:
                    break
                time.sleep(0.5)
            if job.status != TrainingJob.Status.COMPLETED:
                raise SystemExit(f"job {job.pk} ended {job.status}: {job.reason}")
            actual = (job.finished_at - job.started_at).total_seconds()
            row = {"model_type": model_type, "dataset": data_name,
                   "rows": dataset.split_sizes, "estimate_s": round(estimate, 1),
                   "actual_s": round(actual, 1), "ratio": round(estimate / actual, 2)}
            results.append(row)
            print(f"{model_type:20s} on {data_name:4s}: estimated {estimate:7.1f} s, took "
                  f"{actual:7.1f} s, estimate/actual {estimate / actual:5.2f}"
                  f"{'' if 0.5 <= estimate / actual <= 2 else '  <- outside 2x'}", flush=True)
    finally:
        worker.terminate()
        worker.wait(timeout=60)
    print(f"load average at the end: {os.getloadavg()}")
    within = sum(0.5 <= r["ratio"] <= 2 for r in results)
    print(json.dumps({"jobs": results, "within_2x": within, "of": len(results)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
