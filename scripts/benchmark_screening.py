"""Next-record latency while the ranker retrains, on a 20,000-record session.

Synthesises 20,000 records from the demo rows (cycled, numbered), decides 200 of them, then
times screening.selectors.record_next in this thread while screening.ranking.ranker_refresh runs
in another; prints p50/p95/max in ms and the refresh's own duration.

    DJANGO_SETTINGS_MODULE=medlitbot_project.settings_test DATABASE_URL=sqlite:////tmp/b.sqlite3 \
        .venv/bin/python manage.py migrate && ... .venv/bin/python scripts/benchmark_screening.py
"""

from __future__ import annotations

import csv
import statistics
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
    from django.db import connection

    from dataset_management.models import Dataset
    from projects import services as project_services
    from screening import ranking, selectors
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
    took: dict[str, float] = {}

    def refresh() -> None:
        start = time.perf_counter()
        ranking.ranker_refresh(session_id=session.pk)
        took["refresh"] = time.perf_counter() - start
        connection.close()

    worker = threading.Thread(target=refresh)
    worker.start()
    latencies = []
    while worker.is_alive() or len(latencies) < 200:
        start = time.perf_counter()
        selectors.record_next(user=user, session=session)
        latencies.append((time.perf_counter() - start) * 1000)
    worker.join()
    latencies.sort()
    p95 = latencies[int(0.95 * (len(latencies) - 1))]
    print(f"records={records} next_record_calls={len(latencies)} "
          f"p50_ms={statistics.median(latencies):.2f} p95_ms={p95:.2f} "
          f"max_ms={latencies[-1]:.2f} ranker_refresh_s={took.get('refresh', 0):.1f}")
    ScreeningSession.objects.filter(pk=session.pk).update(ranker_error="")


if __name__ == "__main__":
    main()
