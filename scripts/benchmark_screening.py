"""Next-record and save latency while the ranker retrains, on a 20,000-record session.

Synthesises 20,000 records from the demo rows (cycled, numbered), decides 200 of them, then
times, in this thread while screening.ranking.ranker_refresh runs back to back in another
(so every timed call overlaps a refresh): screening.selectors.record_next (the query alone);
the screen page's next record as it is sent (record_next + record_payload, with the session's
highlight terms, as next.json answers); and a save (services.decision_record, as decide.json
calls it, with screen_progress, which its answer carries). Prints p50/p95/max in ms for each,
and the refreshes' number and duration.

With `--first-ranking`: the seconds from a session's first yes and no to the first ranked record
served, on a 2,000-record collection of the demo data (demo_data/medlit_challenge.csv), with a
real inference worker and a real training worker fine-tuning MiniLM on the same machine
meanwhile; `--follow S` also waits for the sentence vectors and the ranker judged with them.
Prints one figure a line, then a JSON line.

The refresh runs in a thread of this process by default (it then holds the GIL while it
tokenises, which the product never does: there it runs on the inference worker), or, with
`--refresh-in process`, in a process of its own, as the inference worker runs it.

    DJANGO_SETTINGS_MODULE=medlitbot_project.settings_test DATABASE_URL=sqlite:////tmp/b.sqlite3 \
        .venv/bin/python manage.py migrate && ... .venv/bin/python scripts/benchmark_screening.py \
        [--records 20000] [--min-calls 200] [--refresh-in thread|process]
    ... .venv/bin/python scripts/benchmark_screening.py --first-ranking [--records 2000] \
        [--follow 900]    # Redis running; the script starts and stops its two workers
"""

from __future__ import annotations

import argparse
import csv
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Next-record and save latency on a synthetic screening session while its "
                    "ranker retrains. Needs DJANGO_SETTINGS_MODULE and a migrated database "
                    "(DATABASE_URL): see the module's docstring.")
    parser.add_argument("--records", type=int, default=20_000,
                        help="records in the synthetic session (default 20000; 200 are decided)")
    parser.add_argument("--min-calls", type=int, default=200,
                        help="timed next-record/save pairs, the ranker refreshing all along "
                             "(default 200)")
    parser.add_argument("--refresh-in", choices=("thread", "process"), default="thread",
                        help="where the ranker refresh runs: a thread of this process "
                             "(default; shares its GIL) or a process of its own, as the "
                             "inference worker runs it")
    args = parser.parse_args(argv)
    if args.records <= 200 or args.min_calls < 1:
        parser.error("--records must exceed the 200 decided records and --min-calls be >= 1")
    return args


def main(records: int = 20_000, min_calls: int = 200, refresh_in: str = "thread") -> None:
    import django

    django.setup()
    from django.contrib.auth import get_user_model

    from dataset_management.models import Dataset
    from projects import services as project_services
    from screening.models import Record, ScreeningSession

    user, _ = get_user_model().objects.get_or_create(username="bench")
    project = project_services.project_create(user=user, name="Benchmark")
    dataset = Dataset.objects.create(project=project, owner=user, name="synthetic")
    session = ScreeningSession.objects.create(project=project, dataset=dataset, name="bench",
                                              labels=["oncological"], created_by=user)
    with (ROOT / "demo_data" / "medlit_challenge.csv").open(encoding="utf-8-sig") as handle:
        demo = list(csv.DictReader(handle, delimiter=";"))
    Record.objects.bulk_create([Record(
        session=session, position=i, title=f"{demo[i % len(demo)]['title']} #{i}",
        abstract=demo[i % len(demo)]["abstract"], priority=(i * 7919 % records) / records,
        final=({"oncological": "yes" if "oncological" in demo[i % len(demo)]["group"]
                else "no"} if i < 200 else {}), done=i < 200, reviewer_count=int(i < 200))
        for i in range(records)], batch_size=2000)
    session.final_count = 200
    session.save()
    session.include_terms = ["tumour", "cancer", "carcinoma", "oncolog"]
    session.exclude_terms = ["case report", "review"]
    session.ranker_every = 10**6  # the saves below must not ask for refreshes of their own
    session.save()
    _measure(session, user, records, min_calls=min_calls, refresh_in=refresh_in)


def _percentiles(name: str, latencies: list[float]) -> str:
    import statistics

    latencies = sorted(latencies)
    p95 = latencies[int(0.95 * (len(latencies) - 1))]
    return (f"{name}_calls={len(latencies)} {name}_p50_ms={statistics.median(latencies):.2f} "
            f"{name}_p95_ms={p95:.2f} {name}_max_ms={latencies[-1]:.2f}")


def _refreshes(session_id: int, stop: Any, took: Any) -> None:
    """Ranker refreshes back to back until `stop` is set, each one's duration put in `took`
    (a list, or a queue from a process), "started" first: every timed call overlaps one."""
    from django.db import connection

    from screening import ranking

    put = took.append if isinstance(took, list) else took.put
    put("started")
    while not stop.is_set():
        start = time.perf_counter()
        ranking.ranker_refresh(session_id=session_id)
        put(time.perf_counter() - start)
    put("stopped")
    connection.close()


def _refreshes_process(session_id: int, stop: Any, took: Any) -> None:
    """A spawned process's entry: Django set up afresh, as in a worker."""
    import django

    django.setup()
    _refreshes(session_id, stop, took)


def _measure(session, user, records: int, *, min_calls: int, refresh_in: str) -> None:
    import multiprocessing

    from django.db import connection

    from screening import selectors, services
    from screening.models import ScreeningSession

    if refresh_in == "process":
        connection.close()  # the child opens its own; nothing is shared across the spawn
        spawn = multiprocessing.get_context("spawn")
        stop, took = spawn.Event(), spawn.Queue()
        worker: Any = spawn.Process(target=_refreshes_process, args=(session.pk, stop, took))
    else:
        stop, took = threading.Event(), []
        worker = threading.Thread(target=_refreshes, args=(session.pk, stop, took))
    worker.start()
    if refresh_in == "process":
        assert took.get(timeout=300) == "started"  # timed from when its Django is set up
    query, page, save = [], [], []
    while len(query) < min_calls:
        start = time.perf_counter()
        record = selectors.record_next(user=user, session=session)
        query.append((time.perf_counter() - start) * 1000)
        selectors.record_payload(record=record, user=user)
        page.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        services.decision_record(user=user, record=record, values={"oncological": "no"})
        selectors.screen_progress(user=user, session=session)
        save.append((time.perf_counter() - start) * 1000)
    stop.set()
    if refresh_in == "process":
        said = [took.get(timeout=600)]
        while said[-1] != "stopped":
            said.append(took.get(timeout=600))
        worker.join()
    else:
        worker.join()
        said = list(took)
    # The last refresh ended after the last timed call: counted, it overlapped calls too.
    durations = [d for d in said if isinstance(d, float)]
    print(f"records={records} refresh_in={refresh_in} ranker_refreshes={len(durations)} "
          f"ranker_refresh_s_mean={sum(durations) / max(1, len(durations)):.1f} "
          f"ranker_refresh_s_max={max(durations, default=0):.1f} "
          f"{_percentiles('next_record', query)} {_percentiles('next_json', page)} "
          f"{_percentiles('save', save)}")
    ScreeningSession.objects.filter(pk=session.pk).update(ranker_error="")


def _worker_start(queues: str, pool: str, concurrency: int, log: Path) -> Any:
    import os
    import subprocess
    import uuid

    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "medlitbot_project", "worker", f"--pool={pool}",
         f"--concurrency={concurrency}", f"--queues={queues}", "--without-gossip",
         "--without-mingle", "--loglevel=INFO", f"--hostname=bench-{uuid.uuid4().hex[:8]}@%h"],
        cwd=ROOT, env=dict(os.environ), stdout=log.open("ab"), stderr=subprocess.STDOUT,
        start_new_session=True)  # its own group: the training process it spawns stops with it
    deadline = time.monotonic() + 180
    while " ready." not in log.read_text(errors="replace"):
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the {queues} worker did not start:\n{log.read_text()}")
        time.sleep(0.5)
    return process


def _collection(user: Any, records: int, folder: Path) -> Any:
    from django.core.files import File

    from dataset_management.services import dataset_create_from_upload
    from projects import services as project_services

    with (ROOT / "demo_data" / "medlit_challenge.csv").open(encoding="utf-8-sig") as handle:
        rows = list(csv.DictReader(handle, delimiter=";"))[:records]
    if len(rows) < records:
        raise SystemExit(f"demo_data holds {len(rows)} records, fewer than --records")
    path = folder / "first-ranking.csv"
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["title", "abstract", "labels"])
        writer.writerows([r["title"], r["abstract"], r["group"]] for r in rows)
    project = project_services.project_create(user=user, name="First ranking benchmark")
    with path.open("rb") as handle:
        return dataset_create_from_upload(
            owner=user, project=project, name=f"demo {records}",
            uploaded_file=File(handle, name=path.name),
            mapping={"title_column": "title", "abstract_column": "abstract",
                     "label_column": "labels"})


def first_ranking(records: int = 2000, label: str = "oncological",
                  follow_s: float = 0.0) -> dict[str, Any]:
    """Seconds from the first yes and no to the first ranked record served, on a real
    inference worker (threads, 2, as shipped) while a real training worker fine-tunes MiniLM
    on the same collection; with `follow_s`, also how long the sentence vectors took and the
    ranker judged best once they were in."""
    import os
    import signal
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="medlitbot-first-ranking-"))
    os.environ.update(SCREENING_RANKER="svm-embed", EMBEDDING_CACHE_DIR=str(folder / "cache"),
                      CELERY_QUEUE_PREFIX=f"bench{os.getpid()}-")
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model

    from classification import services as classification_services
    from classification.models import TrainingJob

    user, _ = get_user_model().objects.get_or_create(username="bench", is_staff=True)
    dataset = _collection(user, records, folder)
    workers = [_worker_start(settings.QUEUE_TRAINING, "solo", 1, folder / "training.log"),
               _worker_start(settings.QUEUE_INFERENCE, "threads", 2, folder / "inference.log")]
    try:
        job = classification_services.training_job_create(
            owner=user, dataset=dataset, model_type="minilm", name="load", config={"epochs": 3})
        while (status := TrainingJob.objects.get(pk=job.pk).status) != "running":
            if status in ("failed", "cancelled", "completed"):
                raise SystemExit(f"the training job is {status}: {folder / 'training.log'}")
            time.sleep(0.5)
        return _first_ranking_timed(user, dataset, label, follow_s=follow_s,
                                    training=job.pk) | {"records": records}
    finally:
        for worker in workers:  # a warm shutdown would wait for the training to end
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait(timeout=60)


def _first_ranking_timed(user: Any, dataset: Any, label: str, *, follow_s: float,
                         training: Any) -> dict[str, Any]:
    from classification.models import TrainingJob
    from screening import selectors, services
    from screening.models import ScreeningSession

    created = time.perf_counter()
    session = services.session_create(user=user, dataset=dataset, name="first ranking",
                                      labels=[label])
    given: set[str] = set()
    while given != {"yes", "no"}:
        record = selectors.record_next(user=user, session=session)
        value = "yes" if label in (record.truth or []) else "no"
        services.decision_record(user=user, record=record, values={label: value})
        given.add(value)
    both, decided = time.perf_counter(), session.records.filter(done=True).count()
    said = [selectors.session_summary(session=session)["ranking"]["text"]]
    while label not in selectors.record_next(user=user, session=session).scores:
        time.sleep(0.1)
    served = time.perf_counter()
    while (summary := selectors.session_summary(session=session))["ranker_running"]:
        time.sleep(0.1)  # the scores are written before the lock is released
    said.append(summary["ranking"]["text"])
    result: dict[str, Any] = {
        "decided_before_both": decided, "first_ranked_s": round(served - both, 2),
        "training_running": TrainingJob.objects.get(pk=training).status == "running",
        "said_after_both": said[0], "said_when_served": said[1]}
    deadline = created + follow_s
    while follow_s and time.perf_counter() < deadline:
        with_vectors = ScreeningSession.objects.filter(pk=session.pk,
                                                       ranker_choice__vectors=True).exists()
        summary = selectors.session_summary(session=session)
        vectors = summary["ranking"]["vectors"]
        if vectors["ready"] >= vectors["total"] and "vectors_s" not in result:
            result["vectors_s"] = round(time.perf_counter() - created, 1)
        if with_vectors and not summary["ranker_running"]:
            result["judged"] = summary["ranking"]["text"]
            break
        if "vectors_s" in result and not summary["ranker_running"]:
            record = selectors.record_next(user=user, session=session)  # ranker_every more
            services.decision_record(user=user, record=record, values={
                label: "yes" if label in (record.truth or []) else "no"})
        time.sleep(0.5)
    return result


if __name__ == "__main__":
    import json

    if "--first-ranking" in sys.argv:
        parser = argparse.ArgumentParser(description="Seconds from the first yes and no to "
                                         "the first ranked record, while a training runs.")
        parser.add_argument("--first-ranking", action="store_true")
        parser.add_argument("--records", type=int, default=2000)
        parser.add_argument("--follow", type=float, default=0.0,
                            help="also wait this many seconds for the sentence vectors and "
                                 "the ranker judged with them")
        options = parser.parse_args()
        figures = first_ranking(records=options.records, follow_s=options.follow)
        for key, value in figures.items():
            print(f"{key}: {value}")
        print(json.dumps(figures))
    else:
        options = arguments()
        main(records=options.records, min_calls=options.min_calls,
             refresh_in=options.refresh_in)
