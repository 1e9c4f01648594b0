"""Small truths: /api/ answers with its endpoints, /favicon.ico exists, and the demo account
that setup_demo makes is an ordinary user, not an administrator."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

pytestmark = pytest.mark.django_db


def test_the_api_root_lists_its_endpoints_without_login(client: Any) -> None:
    response = client.get("/api/")

    assert response.status_code == 200
    endpoints = response.json()["endpoints"]
    assert endpoints["token"]["url"].endswith("/api/token/")
    assert endpoints["docs"]["url"].endswith("/api/docs/")
    for entry in endpoints.values():
        assert client.get(entry["url"]).status_code in (200, 401, 403, 405)


def test_the_favicon_is_a_real_icon(client: Any) -> None:
    response = client.get("/favicon.ico")

    assert response.status_code == 200
    body = b"".join(response.streaming_content)
    assert body[:4] == b"\x00\x00\x01\x00"  # the ICO header


def test_the_demo_account_cannot_open_the_admin(settings: Any, tmp_path: Any) -> None:
    user_model = get_user_model()
    # An install from before: the demo user was staff. setup_demo demotes it.
    user_model.objects.create_user("demo", "demo@example.org", "x", is_staff=True)
    settings.MEDIA_ROOT = tmp_path / "media"

    call_command("setup_demo")

    demo = user_model.objects.get(username="demo")
    assert not demo.is_staff
    assert not demo.is_superuser
    assert demo.check_password("x")  # an existing password is left alone
