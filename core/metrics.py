"""Prometheus metrics: what the database and the broker say at scrape time, and request latency.

The job, queue and worker figures are read when Prometheus scrapes (`DatabaseCollector`), never
kept in process memory, so every web process answers the same and a restart loses nothing.
Request latency is the one in-process metric (`RequestMetricsMiddleware`).

Under gunicorn with several worker processes each process has its own latency histogram; set
PROMETHEUS_MULTIPROC_DIR (an empty folder, before the web starts) and /metrics sums them.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterator

from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from prometheus_client import CollectorRegistry, Histogram, ProcessCollector, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric

from core import registry, selectors

logger = logging.getLogger(__name__)

REQUEST_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 120.0)
# Anything else (WebDAV verbs, garbage) is one label value: clients must not mint label values.
KNOWN_METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

REGISTRY = CollectorRegistry()
REQUEST_LATENCY = Histogram(
    "medlitbot_http_request_duration_seconds",
    "Time from the request reaching Django to its response, by method, route and status class.",
    ["method", "route", "status"],
    buckets=REQUEST_BUCKETS,
    registry=REGISTRY,
)
ProcessCollector(registry=REGISTRY)


class DatabaseCollector:
    """Reads the registered families (core.registry) at scrape time: the apps' own (training
    jobs, from classification) and core's queues and worker heartbeats below.

    Each family is read on its own: one that fails (say, Redis is down) is skipped and counted
    in medlitbot_metrics_collect_errors, and the others are still served.
    """

    def describe(self) -> list[Metric]:
        # Nothing to announce up front: registering must not query the database.
        return []

    def collect(self) -> Iterator[Metric]:
        errors = GaugeMetricFamily(
            "medlitbot_metrics_collect_errors",
            "Metric families that could not be read at this scrape (see the web log).",
            labels=["family"],
        )
        for collector in registry.metrics_collectors():
            try:
                yield from collector.func()
                errors.add_metric([collector.name], 0)
            except Exception:
                logger.exception("metrics: could not read %s", collector.name)
                errors.add_metric([collector.name], 1)
        yield errors


def queue_depths_read() -> list[Metric]:
    depths = selectors.broker_queue_depths(timeout=1.5)
    if depths is None:  # not Redis (filesystem broker), or unreachable: nothing to say
        return []
    family = GaugeMetricFamily(
        "medlitbot_queue_depth", "Messages waiting in each broker queue (Redis LLEN).",
        labels=["queue"],
    )
    for queue, depth in depths.items():
        family.add_metric([queue], depth)
    return [family]


def worker_heartbeats_read() -> list[Metric]:
    now = timezone.now()
    rows = selectors.worker_heartbeat_list()
    age = GaugeMetricFamily(
        "medlitbot_worker_heartbeat_age_seconds",
        "Seconds since each Celery worker last wrote its heartbeat row.",
        labels=["worker", "pool"],
    )
    up = GaugeMetricFamily(
        "medlitbot_worker_up",
        "1 when the worker's heartbeat is younger than WORKER_HEARTBEAT_TIMEOUT.",
        labels=["worker", "pool"],
    )
    busy = GaugeMetricFamily(
        "medlitbot_worker_busy", "1 while a live worker runs a task.", labels=["worker"]
    )
    for row in rows:
        labels = [row.hostname, row.pool]
        live = row.is_live(now=now)
        age.add_metric(labels, row.age_seconds(now=now))
        up.add_metric(labels, 1 if live else 0)
        busy.add_metric([row.hostname], 1 if live and row.state == row.State.BUSY else 0)
    serving = GaugeMetricFamily(
        "medlitbot_queue_live_workers", "Live workers consuming each queue (alert on 0).",
        labels=["queue"],
    )
    # An optional queue (GPU training) is reported once some worker has served it, so an
    # install without GPUs never shows a queue at 0 that an "alert on 0" rule would page on.
    optional = [queue for queue in selectors.worker_queues_optional().values()
                if any(row.serves(queue) for row in rows)]
    queues = [*selectors.worker_queues().values(), *optional]
    for entry in selectors.worker_queue_coverage(queues=queues, workers=rows):
        serving.add_metric([entry.queue], len(entry.live))
    return [age, up, busy, serving]


REGISTRY.register(DatabaseCollector())


def metrics_exposition() -> tuple[bytes, str]:
    """The text exposition and its content type."""
    from prometheus_client import CONTENT_TYPE_LATEST

    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        # Each gunicorn process wrote its latency samples to the folder; sum them here.
        summed = CollectorRegistry()
        multiprocess.MultiProcessCollector(summed)
        summed.register(DatabaseCollector())
        return generate_latest(summed), CONTENT_TYPE_LATEST
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST


def request_route(request: HttpRequest) -> str:
    """The URL pattern's name, never the raw path: paths carry ids and would explode labels."""
    match = getattr(request, "resolver_match", None)
    if match is None:
        # Answered before URL resolution (static files, redirects, refusals) or not found.
        return "unresolved"
    return match.view_name or "unnamed"


class RequestMetricsMiddleware:
    """Observes each request's latency; first in MIDDLEWARE so it times all the others too.

    Streaming responses (downloads) are timed to their first byte, not to their last.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        try:
            method = request.method if request.method in KNOWN_METHODS else "other"
            REQUEST_LATENCY.labels(
                method=method, route=request_route(request),
                status=f"{response.status_code // 100}xx",
            ).observe(time.perf_counter() - started)
        except Exception:  # a metrics bug must never cost a response
            logger.exception("could not record request metrics")
        return response


def metrics_client_allowed(*, remote_addr: str, allowed: list[str]) -> bool:
    """Whether REMOTE_ADDR is in METRICS_ALLOWED_IPS (addresses or CIDR networks; "*": all)."""
    import ipaddress

    if "*" in allowed:
        return True
    try:
        address = ipaddress.ip_address(remote_addr.split("%", 1)[0])
    except ValueError:
        return False
    if getattr(address, "ipv4_mapped", None):  # "::ffff:10.0.0.5" from a dual-stack socket
        address = address.ipv4_mapped
    for entry in allowed:
        try:
            if address in ipaddress.ip_network(entry.strip(), strict=False):
                return True
        except ValueError:
            logger.warning("METRICS_ALLOWED_IPS: %r is not an address or network", entry)
    return False
