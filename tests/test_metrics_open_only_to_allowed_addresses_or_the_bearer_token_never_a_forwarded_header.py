"""/metrics answers a connection from METRICS_ALLOWED_IPS or a client with
"Authorization: Bearer <METRICS_TOKEN>", nothing else. The address is the connection's own: a
forwarded header never opens it, and a request that came through a proxy (which has the proxy's
address, 127.0.0.1 for a proxy on this host) needs the token."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db
TOKEN = "scrape-" + "k" * 40


def metrics(remote: str, **headers: str) -> int:
    return Client(REMOTE_ADDR=remote).get("/metrics", **headers).status_code


def test_a_forwarded_header_from_a_disallowed_address_does_not_open_it() -> None:
    for header in ("HTTP_X_FORWARDED_FOR", "HTTP_X_REAL_IP"):
        assert metrics("203.0.113.9", **{header: "127.0.0.1"}) == 403
    assert metrics("203.0.113.9", HTTP_FORWARDED="for=127.0.0.1") == 403


def test_a_request_through_a_proxy_on_this_host_is_refused_without_the_token() -> None:
    # nginx on the same machine connects from 127.0.0.1 (allowed) for a client on the internet.
    response = Client(REMOTE_ADDR="127.0.0.1").get(
        "/metrics", HTTP_X_FORWARDED_FOR="198.51.100.23")
    assert response.status_code == 403
    assert "through a proxy" in response.content.decode()
    assert metrics("127.0.0.1") == 200  # a scraper on this host, directly


def test_the_bearer_token_opens_it_from_anywhere_and_a_wrong_one_does_not(settings) -> None:
    settings.METRICS_TOKEN = TOKEN
    assert metrics("203.0.113.9", HTTP_AUTHORIZATION=f"Bearer {TOKEN}") == 200
    assert metrics("127.0.0.1", HTTP_X_FORWARDED_FOR="198.51.100.23",
                   HTTP_AUTHORIZATION=f"Bearer {TOKEN}") == 200
    assert metrics("203.0.113.9", HTTP_AUTHORIZATION=f"Bearer {TOKEN}x") == 403
    assert metrics("127.0.0.1", HTTP_AUTHORIZATION="Bearer wrong") == 403
    assert metrics("203.0.113.9", HTTP_AUTHORIZATION=f"Token {TOKEN}") == 403


def test_without_a_configured_token_no_bearer_opens_it(settings) -> None:
    settings.METRICS_TOKEN = ""
    assert metrics("203.0.113.9", HTTP_AUTHORIZATION="Bearer ") == 403
    assert metrics("203.0.113.9", HTTP_AUTHORIZATION="Bearer anything") == 403


def test_a_trusted_proxy_count_for_the_throttles_does_not_open_metrics(settings) -> None:
    settings.TRUSTED_PROXY_COUNT = 1
    settings.METRICS_ALLOWED_IPS = ["10.0.0.0/8"]
    assert metrics("127.0.0.1", HTTP_X_FORWARDED_FOR="10.1.2.3") == 403
    assert metrics("10.1.2.3") == 200
