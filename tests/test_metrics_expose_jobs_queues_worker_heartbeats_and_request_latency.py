"""/metrics: Prometheus text read from the database and Redis at scrape time (jobs by status,
job durations, queue depth, worker heartbeat ages) plus request latency; only for
METRICS_ALLOWED_IPS."""

from __future__ import annotations

from datetime import timedelta

import pytest
import redis
from django.conf import settings
from django.test import Client
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from core import services


def scrape(client: Client | None = None) -> dict[str, list]:
    response = (client or Client()).get("/metrics")
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=")
    families = text_string_to_metric_families(response.content.decode())
    return {family.name: family.samples for family in families}


def value(samples: list, name: str, **labels: str) -> float:
    found = [s.value for s in samples
             if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())]
    assert len(found) == 1, (name, labels, samples)
    return found[0]


@pytest.mark.django_db
def test_jobs_by_status_and_finished_job_durations(user, rows) -> None:
    dataset = rows.dataset(user)
    now = timezone.now()
    for status in ("queued", "running", "running"):
        rows.job(rows.model(user, dataset), status=status)
    rows.job(rows.model(user, dataset), status="completed",
             started_at=now - timedelta(seconds=90), finished_at=now)
    rows.job(rows.model(user, dataset), status="completed",
             started_at=now - timedelta(seconds=4000), finished_at=now)
    rows.job(rows.model(user, dataset), status="failed",
             started_at=now - timedelta(seconds=10), finished_at=now)

    metrics = scrape()

    jobs = metrics["medlitbot_training_jobs"]
    assert value(jobs, "medlitbot_training_jobs", status="queued") == 1
    assert value(jobs, "medlitbot_training_jobs", status="running") == 2
    assert value(jobs, "medlitbot_training_jobs", status="completed") == 2
    assert value(jobs, "medlitbot_training_jobs", status="stalled") == 0
    assert value(metrics["medlitbot_training_queue_oldest_wait_seconds"],
                 "medlitbot_training_queue_oldest_wait_seconds") >= 0
    durations = metrics["medlitbot_training_job_duration_seconds"]
    name = "medlitbot_training_job_duration_seconds"
    done = {"status": "completed", "model_type": "tfidf_logreg"}
    assert value(durations, f"{name}_bucket", le="60.0", **done) == 0
    assert value(durations, f"{name}_bucket", le="120.0", **done) == 1
    assert value(durations, f"{name}_bucket", le="7200.0", **done) == 2
    assert value(durations, f"{name}_bucket", le="+Inf", **done) == 2
    assert value(durations, f"{name}_count", **done) == 2
    assert value(durations, f"{name}_sum", **done) == pytest.approx(4090, abs=1)
    assert value(durations, f"{name}_count", status="failed", model_type="tfidf_logreg") == 1
    errors = metrics["medlitbot_metrics_collect_errors"]
    assert {s.labels["family"]: s.value for s in errors} == {
        "jobs": 0, "job_durations": 0, "queues": 0, "workers": 0,
    }


@pytest.mark.django_db
def test_worker_heartbeat_ages_and_live_workers_per_queue() -> None:
    started = timezone.now()
    services.worker_heartbeat_beat(
        hostname="training@box", host="box", pid=11, queues=[settings.QUEUE_TRAINING],
        pool="solo", concurrency=1, started_at=started, state="busy",
        current_job="training job 1",
    )
    services.worker_heartbeat_beat(
        hostname="inference@box", host="box", pid=12,
        queues=[settings.QUEUE_INFERENCE, settings.QUEUE_DEFAULT], pool="threads",
        concurrency=2, started_at=started, state="idle",
    )
    from core.models import WorkerHeartbeat

    WorkerHeartbeat.objects.filter(hostname="inference@box").update(
        last_seen=timezone.now() - timedelta(seconds=settings.WORKER_HEARTBEAT_TIMEOUT + 20)
    )

    metrics = scrape()

    ages = metrics["medlitbot_worker_heartbeat_age_seconds"]
    assert value(ages, "medlitbot_worker_heartbeat_age_seconds", worker="training@box") < 5
    assert value(ages, "medlitbot_worker_heartbeat_age_seconds",
                 worker="inference@box", pool="threads") >= settings.WORKER_HEARTBEAT_TIMEOUT
    up = metrics["medlitbot_worker_up"]
    assert value(up, "medlitbot_worker_up", worker="training@box") == 1
    assert value(up, "medlitbot_worker_up", worker="inference@box") == 0
    assert value(metrics["medlitbot_worker_busy"], "medlitbot_worker_busy",
                 worker="training@box") == 1
    serving = metrics["medlitbot_queue_live_workers"]
    assert value(serving, "medlitbot_queue_live_workers", queue=settings.QUEUE_TRAINING) == 1
    assert value(serving, "medlitbot_queue_live_workers", queue=settings.QUEUE_DEFAULT) == 0


@pytest.mark.django_db
def test_queue_depth_is_read_from_redis() -> None:
    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    broker.delete(settings.QUEUE_TRAINING)
    broker.rpush(settings.QUEUE_TRAINING, b"{}", b"{}", b"{}")
    try:
        metrics = scrape()
    finally:
        broker.delete(settings.QUEUE_TRAINING)

    depth = metrics["medlitbot_queue_depth"]
    assert value(depth, "medlitbot_queue_depth", queue=settings.QUEUE_TRAINING) == 3
    assert value(depth, "medlitbot_queue_depth", queue=settings.QUEUE_INFERENCE) == 0


@pytest.mark.django_db
def test_request_latency_is_recorded_by_route_name_not_path(alice_client: Client) -> None:
    def observed(route: str) -> float:
        samples = scrape()["medlitbot_http_request_duration_seconds"]
        return sum(s.value for s in samples
                   if s.name.endswith("_count") and s.labels["route"] == route
                   and s.labels["method"] == "GET" and s.labels["status"] == "2xx")

    before = observed("dashboard")
    assert alice_client.get("/").status_code == 200
    assert alice_client.get("/").status_code == 200
    assert Client().get("/no-such-page/").status_code == 404

    assert observed("dashboard") == before + 2
    samples = scrape()["medlitbot_http_request_duration_seconds"]
    routes = {s.labels["route"] for s in samples}
    assert "/no-such-page/" not in routes
    assert "unresolved" in routes
    assert "core:healthz" in routes or "core:metrics" in routes


@pytest.mark.django_db
def test_metrics_are_refused_to_addresses_outside_the_allowed_list(settings) -> None:
    assert Client(REMOTE_ADDR="203.0.113.9").get("/metrics").status_code == 403
    settings.METRICS_ALLOWED_IPS = ["10.0.0.0/8"]
    assert Client(REMOTE_ADDR="10.1.2.3").get("/metrics").status_code == 200
    assert Client(REMOTE_ADDR="127.0.0.1").get("/metrics").status_code == 403
    # Prometheus scrapes by address, which ALLOWED_HOSTS would refuse for a page.
    assert Client(REMOTE_ADDR="10.1.2.3", HTTP_HOST="10.0.0.5:8000").get(
        "/metrics").status_code == 200
