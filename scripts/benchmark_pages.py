#!/usr/bin/env python
"""Page render times with 100 models and 100 datasets present (target: under 200 ms).

Seeds a throw-away database the way scripts/benchmark_web.py does (one real imported dataset,
99 more rows, 99 trained models with full metrics and one training) in the user's personal
project, plus --projects more team projects of --models models each, with --members members
(the user among them) and an activity log, then for every page:
  * HTTP: --repeat requests through gunicorn as start_m1.sh runs it (DEBUG=False), one at a
    time, after one warm-up request; p50, p95 and max of the full localhost round trip;
  * in process: the number of SQL queries the page runs (django.test.Client), which must not
    grow with the number of rows.

    .venv/bin/python scripts/benchmark_pages.py [--repeat 30] [--models 100] [--datasets 100]
        [--projects 9] [--members 5]

Prints a table; the last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmark_web import (
    configure_env,
    login,
    migrate_and_seed,
    percentile,
    request,
    start_server,
    stop_process,
)

TARGET_MS = 200


def page_urls(ids: dict) -> dict[str, str]:
    return {
        "dashboard": "/",
        "datasets": "/datasets/",
        "dataset_detail": f"/datasets/{ids['dataset']}/",
        "models": "/models/",
        "model_detail": f"/models/{ids['model']}/",
        "model_new": "/models/new/",
        "job_detail": f"/jobs/{ids['job']}/",
        "job_progress": f"/jobs/{ids['job']}/progress/?log=1",
        "classify": "/classify/",
        "compare_8": "/models/compare/?" + "&".join(f"ids={i}" for i in ids["compare"]),
        "projects": "/projects/",
        "project_detail": f"/projects/{ids['team']}/",
        "api_models": "/api/models/",
        "api_datasets": "/api/datasets/",
        "api_jobs": "/api/jobs/",
        "api_projects": "/api/projects/",
        "api_members": f"/api/projects/{ids['team']}/members/",
        "api_activity": f"/api/projects/{ids['team']}/activity/",
        "api_docs": "/api/docs/",
    }


def seed_projects(*, projects: int, models: int, members: int) -> int:
    """Team projects beside the personal one, each with its models, members and a log."""
    from django.contrib.auth import get_user_model

    from classification.models import MLModel
    from dataset_management.models import Dataset
    from projects import services
    from projects.models import Activity, Membership

    users = get_user_model().objects
    bench = users.get(username="bench")
    colleagues = [users.create_user(f"colleague{i}") for i in range(max(0, members - 1))]
    template = MLModel.objects.filter(owner=bench).exclude(metrics={}).first()
    team_id = 0
    for p in range(projects):
        team = services.project_create(user=bench, name=f"Team {p:02d}")
        team_id = team_id or team.pk
        Membership.objects.bulk_create([Membership(project=team, user=c, role=role) for c, role
                                        in zip(colleagues, ["viewer", "reviewer", "maintainer",
                                                            "owner"] * members, strict=False)])
        data = Dataset.objects.create(owner=bench, project=team, name=f"Team {p:02d} data",
                                      label_names=template.label_names, row_count=2000)
        MLModel.objects.bulk_create([
            MLModel(owner=bench, project=team, dataset=data, name=f"Team {p:02d} model {i:03d}",
                    model_type=template.model_type, status=template.status,
                    metrics=template.metrics, label_names=template.label_names,
                    is_multilabel=True) for i in range(models)])
        Activity.objects.bulk_create([
            Activity(project=team, actor=bench, verb="training_started",
                     summary=f"bench started training model {i}") for i in range(200)])
    return team_id


def query_counts(urls: dict[str, str]) -> dict[str, int]:
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client()
    client.force_login(get_user_model().objects.get(username="bench"))
    counts = {}
    for name, url in urls.items():
        client.get(url)  # warm up: session and caches
        with CaptureQueriesContext(connection) as ctx:
            response = client.get(url)
        counts[name] = len(ctx.captured_queries) if response.status_code == 200 else -1
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--models", type=int, default=100)
    parser.add_argument("--datasets", type=int, default=100)
    parser.add_argument("--projects", type=int, default=9,
                        help="team projects beside the personal one (default: 10 in all)")
    parser.add_argument("--members", type=int, default=5, help="members of each team project")
    parser.add_argument("--database-url", default=None, help="default: a temp SQLite file")
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="medlitbot-pages-"))
    env = configure_env(scratch, args.database_url)
    ids = migrate_and_seed(env, n_models=args.models, n_datasets=args.datasets)
    ids["team"] = seed_projects(projects=args.projects, models=args.models, members=args.members)
    urls = page_urls(ids)
    os.environ["ALLOWED_HOSTS"] = "testserver,127.0.0.1,localhost"  # for django.test.Client
    from django.conf import settings

    settings.ALLOWED_HOSTS = ["testserver", "127.0.0.1", "localhost"]
    queries = query_counts(urls)
    server, port = start_server(env, scratch / "server.log")
    results = {}
    try:
        cookie = login(port)
        for name, url in urls.items():
            json_api = "progress" in url or (url.startswith("/api/") and "docs" not in url)
            accept = "application/json" if json_api else "text/html"
            status, _ = request(port, url, cookie, accept=accept)
            times = [request(port, url, cookie, accept=accept)[1] * 1000
                     for _ in range(args.repeat)]
            results[name] = {"status": status, "queries": queries[name],
                             "p50_ms": round(percentile(times, 50), 1),
                             "p95_ms": round(percentile(times, 95), 1),
                             "max_ms": round(max(times), 1)}
    finally:
        stop_process(server)
        shutil.rmtree(scratch, ignore_errors=True)

    print(f"{args.projects + 1} projects of {args.models} models ({args.members} members each), "
          f"{args.datasets} datasets; gunicorn, DEBUG=False, "
          f"{'sqlite' if not args.database_url else args.database_url.split(':')[0]}, "
          f"{os.cpu_count()} CPUs; {args.repeat} sequential requests per page")
    print(f"{'page':<15} {'HTTP':>4} {'queries':>7} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
    for name, r in results.items():
        flag = "ok" if r["status"] == 200 and r["p95_ms"] < TARGET_MS else "OVER"
        print(f"{name:<15} {r['status']:>4} {r['queries']:>7} {r['p50_ms']:>8} {r['p95_ms']:>8} "
              f"{r['max_ms']:>8}  {flag}")
    print(json.dumps({"pages": results, "target_ms": TARGET_MS, "models": args.models,
                      "projects": args.projects + 1, "members": args.members,
                      "datasets": args.datasets,
                      "pass_p95": all(r["status"] == 200 and r["p95_ms"] < TARGET_MS
                                      for r in results.values())}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
