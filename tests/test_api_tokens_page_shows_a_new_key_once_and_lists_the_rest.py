"""/account/tokens/: the settings page lists a person's tokens (name, prefix, made, expires,
last used), makes a named one whose key is shown in that answer only, and revokes one."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from api.models import ApiToken
from api.tokens import token_create

pytestmark = pytest.mark.django_db


def test_the_page_needs_a_login_and_is_linked_from_every_page(alice_client) -> None:
    assert Client().get("/account/tokens/").status_code == 302
    assert 'href="/account/tokens/"' in alice_client.get("/").content.decode()


def test_a_new_key_is_shown_once_and_works(alice_client, user) -> None:
    made = alice_client.post("/account/tokens/", {"name": "lab server"})
    assert made.status_code == 200
    assert "no-store" in made["Cache-Control"]
    html = made.content.decode()
    key = re.search(r'id="new-token-key">([^<]+)<', html).group(1)
    assert "Copy it now" in html
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get("/api/datasets/").status_code == 200

    again = alice_client.get("/account/tokens/").content.decode()
    assert key not in again
    assert "lab server" in again
    assert f"{key[:8]}…" in again


def test_the_list_says_which_expired_and_when_each_was_last_used(alice_client, user) -> None:
    old, _ = token_create(user=user, name="old laptop")
    ApiToken.objects.filter(pk=old.pk).update(expires_at=timezone.now() - timedelta(days=1))
    _fresh, key = token_create(user=user, name="new laptop")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    client.get("/api/models/")

    rows = re.findall(r"<tr><td>(.*?)</tr>", alice_client.get("/account/tokens/").content.decode(),
                      re.S)
    assert len(rows) == 2
    newest, oldest = rows
    assert "new laptop" in newest
    assert "never" not in newest
    assert "expired" not in newest
    assert "old laptop" in oldest
    assert "never" in oldest
    assert "expired" in oldest


def test_a_nameless_token_is_refused_with_a_sentence(alice_client) -> None:
    response = alice_client.post("/account/tokens/", {"name": "  "})
    assert response.status_code == 400
    assert "A token needs a name" in response.content.decode()
    assert not ApiToken.objects.exists()
