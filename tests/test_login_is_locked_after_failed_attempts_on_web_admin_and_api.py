"""After AXES_FAILURE_LIMIT wrong passwords an account is locked for the cool-off time on the
login page, the admin login and /api/token/ alike: even the right password is refused, with a
message that says for how long and why. A success before the limit, the cool-off running out,
or `manage.py axes_reset` lets the person in again. /api/token/ is also throttled per client."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.core.management import call_command
from django.http import HttpRequest
from django.test import Client, override_settings

from api.models import ApiToken

pytestmark = pytest.mark.django_db
PASSWORD = "alice-pass-123"
LOCKED = "This account is locked for 15 minutes after 5 failed login attempts"


@pytest.fixture(autouse=True)
def fresh_throttle() -> Iterator[None]:
    # The token throttle counts in the process-wide cache; other tests must not inherit counts.
    cache.clear()
    yield
    cache.clear()


def web_login(client: Client, password: str, *, url: str = "/accounts/login/",
              username: str = "alice"):
    return client.post(url, {"username": username, "password": password})


def api_token(password: str, username: str = "alice"):
    return Client().post("/api/token/", {"username": username, "password": password})


def logged_in(client: Client) -> bool:
    return client.get("/").status_code == 200


def test_the_login_page_locks_the_account_after_five_wrong_passwords(user) -> None:
    client = Client()
    for _ in range(4):
        response = web_login(client, "wrong")
        assert response.status_code == 200
        assert "didn't match" in response.content.decode()
    fifth = web_login(client, "wrong")
    assert fifth.status_code == 429
    assert LOCKED in fifth.content.decode()

    right = web_login(client, PASSWORD)
    assert right.status_code == 429
    assert LOCKED in right.content.decode()
    assert not logged_in(client)


def test_the_admin_login_is_locked_too(user) -> None:
    user.is_staff = True
    user.save()
    client = Client()
    for _ in range(5):
        web_login(client, "wrong", url="/admin/login/")
    response = web_login(client, PASSWORD, url="/admin/login/")
    assert response.status_code == 429
    assert LOCKED in response.content.decode()
    assert client.get("/admin/").status_code == 302  # still sent to the login page


def test_the_api_token_is_refused_with_a_json_reason_once_locked(user) -> None:
    for _ in range(4):
        response = api_token("wrong")
        assert response.status_code == 400
        assert "Unable to log in" in response.json()["non_field_errors"][0]
    assert api_token("wrong").status_code == 429

    right = api_token(PASSWORD)
    assert right.status_code == 429
    assert LOCKED in right.json()["detail"]
    assert not ApiToken.objects.exists()


def test_a_lockout_on_the_web_also_holds_for_the_api(user) -> None:
    for _ in range(5):
        web_login(Client(), "wrong")
    assert api_token(PASSWORD).status_code == 429


def test_a_success_before_the_limit_starts_the_count_again(user) -> None:
    client = Client()
    for _ in range(4):
        web_login(client, "wrong")
    assert web_login(client, PASSWORD).status_code == 302
    for _ in range(4):
        assert api_token("wrong").status_code == 400
    assert api_token(PASSWORD).status_code == 200


def test_axes_reset_unlocks_the_account(user) -> None:
    for _ in range(5):
        api_token("wrong")
    assert api_token(PASSWORD).status_code == 429
    call_command("axes_reset")
    assert api_token(PASSWORD).status_code == 200
    client = Client()
    assert web_login(client, PASSWORD).status_code == 302
    assert logged_in(client)


# Long enough that the sixth request lands inside it on a loaded machine (at 1 s it did not).
@override_settings(AXES_COOLOFF_TIME=timedelta(seconds=5))
def test_the_account_opens_again_after_the_cool_off(user) -> None:
    for _ in range(5):
        api_token("wrong")
    response = api_token(PASSWORD)
    assert response.status_code == 429
    assert "locked for 1 minute after 5 failed" in response.json()["detail"]
    time.sleep(5.2)
    assert api_token(PASSWORD).status_code == 200


def test_the_token_endpoint_is_throttled_per_client(user) -> None:
    # Different usernames, so the lockout (per username and address) never triggers first.
    for i in range(10):
        assert api_token("wrong", username=f"guess{i}").status_code == 400
    response = api_token(PASSWORD)
    assert response.status_code == 429
    assert "throttled" in response.json()["detail"]
    assert int(response["Retry-After"]) > 0


def test_a_test_client_login_passes_a_request_for_axes(user) -> None:
    # Axes refuses to judge an attempt without a request; tests that log in with a password
    # hand it a blank one (force_login needs none).
    client = Client()
    assert client.login(request=HttpRequest(), username="alice", password=PASSWORD)
    assert logged_in(client)
    assert get_user_model().objects.get(username="alice").last_login is not None
