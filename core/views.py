"""Health and metrics endpoints: no login, no user data.

- ``GET /healthz``: the web process answers (liveness); touches nothing else.
- ``GET /readyz``: database, broker, cache, free disk and a live worker for each queue
  (readiness); 503 names the failing checks. It also names the database engine in use.
- ``GET /metrics``: Prometheus text, for connections from METRICS_ALLOWED_IPS or a client that
  sends ``Authorization: Bearer <METRICS_TOKEN>``.

Probes and scrapers call by IP address (a Kubernetes probe sends ``Host: <pod ip>``, Prometheus
``Host: <target>``), which ALLOWED_HOSTS rightly refuses with a 400, and over plain HTTP, which
HTTPS=True would redirect. So ``ProbeMiddleware`` answers these three paths before Django's host
validation and SSL redirect; none of them builds an absolute URL or reads a cookie, which is
what host validation protects. The URLs in core/urls.py serve them too, so they also work
where the middleware is not installed.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Callable

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import Resolver404, resolve
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from core import metrics, selectors

logger = logging.getLogger(__name__)

PROBE_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})


def _no_sniff(response: HttpResponse) -> HttpResponse:
    # SecurityMiddleware, which normally adds this, is skipped for probes (see ProbeMiddleware).
    response["X-Content-Type-Options"] = "nosniff"
    return response


@login_not_required
@require_safe
@never_cache
def healthz(request: HttpRequest) -> HttpResponse:
    return _no_sniff(JsonResponse({"status": "ok"}))


@login_not_required
@require_safe
@never_cache
def readyz(request: HttpRequest) -> HttpResponse:
    readiness = selectors.system_readiness(broker_timeout=1.5)
    response = JsonResponse(readiness.as_dict(), status=200 if readiness.ok else 503)
    if not readiness.ok:
        # A probe polls this every few seconds; Django would log each 503 as an ERROR with no
        # detail. One warning naming the failing checks says more.
        logger.warning("not ready: %s", "; ".join(
            f"{name}: {readiness.checks[name]}" for name in readiness.failing
        ))
        response._has_been_logged = True
    return _no_sniff(response)


# Headers a reverse proxy adds: a request that carries one came through a proxy, so its
# REMOTE_ADDR is the proxy's (127.0.0.1 for one on this host), not the client's.
PROXY_HEADERS = ("HTTP_X_FORWARDED_FOR", "HTTP_FORWARDED", "HTTP_X_REAL_IP")


def metrics_refusal(request: HttpRequest) -> str:
    """'' when the scraper may read /metrics, else why not.

    The bearer token opens it from anywhere. Otherwise the connection's own address must be in
    METRICS_ALLOWED_IPS, and no forwarded header is ever read: it is whatever the client wrote.
    """
    token = str(settings.METRICS_TOKEN)
    sent = request.META.get("HTTP_AUTHORIZATION", "")
    if sent:
        scheme, _, value = sent.partition(" ")
        if token and scheme.lower() == "bearer" and hmac.compare_digest(
                value.strip().encode(), token.encode()):
            return ""
        return "the bearer token does not match METRICS_TOKEN"
    if any(request.META.get(header) for header in PROXY_HEADERS):
        return ("a request through a proxy has the proxy's address; send "
                "Authorization: Bearer <METRICS_TOKEN>")
    if not metrics.metrics_client_allowed(
        remote_addr=request.META.get("REMOTE_ADDR", ""),
        allowed=list(settings.METRICS_ALLOWED_IPS),
    ):
        return "not in METRICS_ALLOWED_IPS, and no bearer token"
    return ""


@login_not_required
@require_safe
@never_cache
def metrics_view(request: HttpRequest) -> HttpResponse:
    refusal = metrics_refusal(request)
    if refusal:
        return _no_sniff(HttpResponse(f"Forbidden: {refusal}\n", status=403,
                                      content_type="text/plain; charset=utf-8"))
    body, content_type = metrics.metrics_exposition()
    return _no_sniff(HttpResponse(body, content_type=content_type))


class ProbeMiddleware:
    """Serves /healthz, /readyz and /metrics ahead of ALLOWED_HOSTS and the HTTPS redirect.

    Goes right after core.metrics.RequestMetricsMiddleware (so probes are timed too) and before
    SecurityMiddleware. Every other path passes through untouched, at the cost of one set lookup.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        path = request.path_info
        if path.rstrip("/") not in PROBE_PATHS:
            return self.get_response(request)
        try:
            match = resolve(path)
        except Resolver404:
            return self.get_response(request)
        if match.func not in (healthz, readyz, metrics_view):
            return self.get_response(request)
        request.resolver_match = match  # names the route in the latency metric
        return match.func(request, *match.args, **match.kwargs)
