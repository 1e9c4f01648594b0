"""Guessing is limited per account as well as per address: 12 wrong passwords for one user, each
from a different address (127.0.0.7 to .18, as in the probe), lock the account at the 10th
(LOGIN_FAILURES_PER_ACCOUNT), and the right password from .19 is then refused with a 429 that
says why and for how long, on the login page and /api/token/. Other accounts log in. The
cool-off doubles at each lockout; the owner is e-mailed where e-mail is set up. While the
cache that counts is unreachable, password logins fail closed with a 503 that says so."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest
from django.core import mail
from django.core.cache import cache
from django.test import Client

from core.loginaccount import _keys, cool_off_seconds

pytestmark = pytest.mark.django_db
PASSWORD = "alice-pass-123"
REFUSED = "Too many failed logins for this account: 10 in 10 minutes, from any address."


@pytest.fixture(autouse=True)
def fresh_counts() -> Iterator[None]:
    cache.clear()
    yield
    cache.clear()


def locked_key(username: str) -> str:
    return _keys(username)[1]


def guess(address: str, username: str = "alice", password: str = "Winter2026") -> int:
    return Client(REMOTE_ADDR=address).post(
        "/accounts/login/", {"username": username, "password": password}).status_code


def test_twelve_addresses_guessing_one_account_lock_it_and_the_right_password_is_refused(
        user, other_user) -> None:
    statuses = [guess(f"127.0.0.{last}") for last in range(7, 19)]
    assert statuses == [200] * 10 + [429] * 2

    client = Client(REMOTE_ADDR="127.0.0.19")
    refused = client.post("/accounts/login/", {"username": "alice", "password": PASSWORD})
    assert refused.status_code == 429
    text = refused.content.decode()
    assert REFUSED in text
    assert "refused for 15 more minutes, even with the right password" in text
    assert 840 < int(refused["Retry-After"]) <= 900
    assert client.get("/").status_code == 302  # not logged in

    token = Client(REMOTE_ADDR="127.0.0.20").post(
        "/api/token/", {"username": "ALICE", "password": PASSWORD})  # the name's case is moot
    assert token.status_code == 429
    assert REFUSED in token.json()["detail"]
    assert guess("127.0.0.21", "bob", "bob-pass-123") == 302  # another account is not locked


def test_the_cool_off_doubles_at_each_lockout_up_to_a_day(user, settings) -> None:
    settings.LOGIN_FAILURES_PER_ACCOUNT = 2
    assert [cool_off_seconds(n) for n in (1, 2, 3)] == [900, 1800, 3600]
    assert cool_off_seconds(20) == 24 * 3600
    for lockout, minutes in ((1, 15), (2, 30), (3, 60)):
        cache.delete(locked_key("alice"))  # the cool-off ends (as if its time had passed)
        assert [guess(f"10.1.{lockout}.{i}") for i in range(3)] == [200, 200, 429], lockout
        text = Client(REMOTE_ADDR="10.2.0.1").post(
            "/accounts/login/", {"username": "alice", "password": PASSWORD}).content.decode()
        assert f"refused for {minutes} more minutes" in text


def test_the_owner_is_told_by_e_mail_where_e_mail_is_set_up(user, settings) -> None:
    settings.EMAIL_ENABLED = True
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    for last in range(10):
        guess(f"192.0.2.{last}")
    (notice,) = mail.outbox
    assert notice.to == ["alice@example.org"]
    assert "10 failed logins to your account “alice”" in notice.body


def test_no_mail_without_e_mail_set_up(user, settings) -> None:
    settings.EMAIL_ENABLED = False
    for last in range(10):
        guess(f"192.0.2.{last}")
    assert mail.outbox == []


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_with_the_cache_unreachable_password_logins_fail_closed(user, settings) -> None:
    settings.CACHES = {"default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": f"redis://127.0.0.1:{_closed_port()}/0",
        "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5}}}
    started = time.monotonic()
    answer = Client(REMOTE_ADDR="198.51.100.40").post(
        "/accounts/login/", {"username": "alice", "password": PASSWORD})
    assert answer.status_code == 503
    assert "Logins are paused: the store that counts failed logins" in answer.content.decode()
    assert answer["Retry-After"] == "60"
    api = Client(REMOTE_ADDR="198.51.100.40").post(
        "/api/token/", {"username": "alice", "password": PASSWORD})
    assert api.status_code == 503
    assert time.monotonic() - started < 30
