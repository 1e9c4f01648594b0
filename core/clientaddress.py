"""The address a request came from, the same for every limit that counts per client.

The throttles (DRF, ``REST_FRAMEWORK["NUM_PROXIES"]``), django-axes (``AXES_CLIENT_IP_CALLABLE``)
and the failed-login limit (core/loginthrottle.py) all use this rule, so one setting,
TRUSTED_PROXY_COUNT, tells them where the client's address is:

- 0 (the default): the connection's address (REMOTE_ADDR). X-Forwarded-For is ignored, since
  any client can send one and name a new address on every request.
- n: the n-th address from the right of X-Forwarded-For, the one the outermost of n trusted
  proxies saw (each proxy appends the address it was called from). This is DRF's own rule.

/metrics never uses this: an allow-list must not be opened by a header (core/views.py).
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest


def client_address(request: HttpRequest) -> str:
    remote = request.META.get("REMOTE_ADDR") or ""
    hops = int(getattr(settings, "TRUSTED_PROXY_COUNT", 0) or 0)
    if hops <= 0:
        return remote
    forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")
                 if part.strip()]
    if not forwarded:
        return remote
    return forwarded[-min(hops, len(forwarded))]
