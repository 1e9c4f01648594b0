"""The throttles count in one cache (Redis) for every process: against gunicorn with 4 worker
processes, /api/token/'s 10/min lets exactly 10 through, not 10 per worker, and the failed-login
limit per address refuses the web login after exactly its limit. The server trusts one proxy
(TRUSTED_PROXY_COUNT=1), so each phase stands for its own client behind it."""

from __future__ import annotations

import http.cookiejar
import re
import urllib.error
import urllib.parse
import urllib.request

import pytest
import redis
from django.conf import settings
from django.core.cache import cache

pytestmark = pytest.mark.django_db(transaction=True)


def post(opener: urllib.request.OpenerDirector, url: str, fields: dict[str, str],
         client: str) -> tuple[int, str, dict[str, str]]:
    request = urllib.request.Request(url, data=urllib.parse.urlencode(fields).encode(),
                                     headers={"X-Forwarded-For": client})
    try:
        with opener.open(request, timeout=30) as response:
            return response.status, response.read().decode(), dict(response.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(), dict(exc.headers)


def test_token_and_login_limits_are_shared_by_four_gunicorn_workers(start_app_server) -> None:
    cache.clear()
    server = start_app_server(WEB_WORKERS="4", WEB_THREADS="2", TRUSTED_PROXY_COUNT="1",
                              LOGIN_FAILURES_PER_ADDRESS="12")
    assert len(server.worker_pids()) == 4
    plain = urllib.request.build_opener()

    tokens = [post(plain, f"{server.url}/api/token/",
                   {"username": f"guess{i}", "password": "x"}, "203.0.113.1")[0]
              for i in range(24)]
    assert tokens == [400] * 10 + [429] * 14

    # The web login, with a session cookie and CSRF token as a browser sends them.
    browser = urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    with browser.open(f"{server.url}/accounts/login/", timeout=30) as page:
        csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.read().decode())[1]
    answers = [post(browser, f"{server.url}/accounts/login/",
                    {"csrfmiddlewaretoken": csrf, "username": f"user{i}", "password": "x"},
                    "203.0.113.2") for i in range(16)]
    assert [status for status, _, _ in answers] == [200] * 12 + [429] * 4
    _, text, headers = answers[-1]
    assert "Too many failed logins from your address: 12 in 10 minutes" in text
    assert int(headers["Retry-After"]) > 0

    # The counts are in Redis, under this run's prefix, not in any process's memory.
    store = redis.Redis.from_url(settings.CACHES["default"]["LOCATION"])
    prefix = settings.CACHES["default"]["KEY_PREFIX"]
    assert int(store.get(f"{prefix}:1:login-failures:203.0.113.2")) == 12
    cache.clear()
