"""Next-record and save latency while the ranker retrains, on a 20,000-record session.

Synthesises 20,000 records from the demo rows (cycled, numbered), decides 200 of them, then
times, in this thread while screening.ranking.ranker_refresh runs in another:
screening.selectors.record_next (the query alone); the screen page's next record as it is sent
(record_next + record_payload, with the session's highlight terms, as next.json answers); and a
save (services.decision_record, as decide.json calls it, with screen_progress, which its answer
carries). Prints p50/p95/max in ms for each and the refresh's own duration.

    DJANGO_SETTINGS_MODULE=medlitbot_project.settings_test DATABASE_URL=sqlite:////tmp/b.sqlite3 \
        .venv/bin/python manage.py migrate && ... .venv/bin/python scripts/benchmark_screening.py
"""

from __future__ import annotations

import csv
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main(records: int = 20_000) -> None:
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
    _measure(session, user, records)


def _percentiles(name: str, latencies: list[float]) -> str:
    import statistics

    latencies = sorted(latencies)
    p95 = latencies[int(0.95 * (len(latencies) - 1))]
    return (f"{name}_calls={len(latencies)} {name}_p50_ms={statistics.median(latencies):.2f} "
            f"{name}_p95_ms={p95:.2f} {name}_max_ms={latencies[-1]:.2f}")


def _measure(session, user, records: int) -> None:
    from django.db import connection

    from screening import ranking, selectors, services
    from screening.models import ScreeningSession

    took: dict[str, float] = {}

    def refresh() -> None:
        start = time.perf_counter()
        ranking.ranker_refresh(session_id=session.pk)
        took["refresh"] = time.perf_counter() - start
        connection.close()

    worker = threading.Thread(target=refresh)
    worker.start()
    query, page, save = [], [], []
    while worker.is_alive() or len(query) < 200:
        start = time.perf_counter()
        record = selectors.record_next(user=user, session=session)
        query.append((time.perf_counter() - start) * 1000)
        selectors.record_payload(record=record, user=user)
        page.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        services.decision_record(user=user, record=record, values={"oncological": "no"})
        selectors.screen_progress(user=user, session=session)
        save.append((time.perf_counter() - start) * 1000)
    worker.join()
    print(f"records={records} ranker_refresh_s={took.get('refresh', 0):.1f} "
          f"{_percentiles('next_record', query)} {_percentiles('next_json', page)} "
          f"{_percentiles('save', save)}")
    ScreeningSession.objects.filter(pk=session.pk).update(ranker_error="")


if __name__ == "__main__":
    main()
