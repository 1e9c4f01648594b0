"""API tokens are stored only as a hash, carry a name, expire, and are revoked at once.

- The key a person is given appears nowhere in the database: every table is dumped as text.
- ``POST /api/token/`` keeps its contract (``{"token": ...}``, ``Authorization: Token ...``) and
  makes a named token each time.
- An expired token and a revoked one answer 401 with a sentence that says when, and where to
  make a new one; revoking takes effect on the very next request.
- Lists and details never carry a secret; someone else's token is a 404.
- Making and revoking are written to the person's activity log.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from api.models import ApiToken
from api.tokens import token_create
from projects.models import Activity
from projects.services import project_personal

pytestmark = pytest.mark.django_db
PASSWORD = "alice-pass-123"
LISTED_KEYS = {"id", "name", "prefix", "state", "created_at", "expires_at", "last_used_at",
               "revoked_at"}


@pytest.fixture(autouse=True)
def fresh_throttle() -> Any:
    cache.clear()  # /api/token/ is throttled per client in the shared cache
    yield
    cache.clear()


def api(key: str | None = None) -> APIClient:
    client = APIClient()
    if key:
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def database_text() -> str:
    """Every value in every table of the database, as one string."""
    parts = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names():
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            parts.extend(repr(value) for row in cursor.fetchall() for value in row)
    return "\n".join(parts)


def test_the_key_appears_nowhere_in_the_database(user) -> None:
    login = Client().post("/api/token/", {"username": "alice", "password": PASSWORD})
    assert login.status_code == 200
    from_login = login.json()["token"]
    made = api(from_login).post("/api/tokens/", {"name": "laptop script"}, format="json")
    assert made.status_code == 201, made.content
    from_api = made.json()["token"]
    web = Client()
    web.force_login(user)
    page = web.post("/account/tokens/", {"name": "lab server"})
    from_page_key = re.search(r'id="new-token-key">([^<]+)<', page.content.decode()).group(1)
    for key in (from_login, from_api, from_page_key):
        assert api(key).get("/api/datasets/").status_code == 200  # used: last_used_at written

    dump = database_text()
    assert ApiToken.objects.count() == 3
    for key in (from_login, from_api, from_page_key):
        assert len(key) >= 40
        assert key not in dump
        assert key[:8] in dump, "the shown prefix is kept, so the dump did read the tables"
    assert all(t.last_used_at is not None for t in ApiToken.objects.all())


def test_post_api_token_keeps_its_contract_and_makes_a_named_expiring_token(user) -> None:
    response = Client().post("/api/token/", {"username": "alice", "password": PASSWORD})
    assert response.status_code == 200
    assert set(response.json()) == {"token"}
    key = response.json()["token"]
    assert api(key).get("/api/models/").status_code == 200

    token = ApiToken.objects.get(user=user)
    assert token.name.startswith("API login ")
    assert timedelta(days=29, hours=23) < token.expires_at - timezone.now() <= timedelta(days=30)
    second = Client().post("/api/token/", {"username": "alice", "password": PASSWORD})
    assert second.json()["token"] != key, "each login is a token of its own, revocable alone"
    assert ApiToken.objects.filter(user=user).count() == 2


def test_an_expired_token_is_refused_with_the_date_and_where_to_get_a_new_one(user) -> None:
    token, key = token_create(user=user, name="old script")
    assert api(key).get("/api/datasets/").status_code == 200
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(minutes=1))

    response = api(key).get("/api/datasets/")
    assert response.status_code == 401
    detail = response.json()["detail"]
    assert "This token (“old script”) expired on " in detail
    assert "make a new one at http://testserver/account/tokens/" in detail
    assert response["WWW-Authenticate"] == "Token"


def test_a_revoked_token_is_refused_at_once_through_the_api_and_the_page(user) -> None:
    token, key = token_create(user=user, name="ci")
    client = api(key)
    assert client.get("/api/datasets/").status_code == 200
    assert client.delete(f"/api/tokens/{token.pk}/").status_code == 204
    refused = client.get("/api/datasets/")
    assert refused.status_code == 401
    assert "This token (“ci”) was revoked on " in refused.json()["detail"]

    other, other_key = token_create(user=user, name="notebook")
    assert api(other_key).get("/api/models/").status_code == 200
    web = Client()
    web.force_login(user)
    page = web.post(f"/account/tokens/{other.pk}/revoke/", follow=True)
    assert "“notebook”" in page.content.decode()
    assert "is revoked" in page.content.decode()
    assert api(other_key).get("/api/models/").status_code == 401
    assert "notebook" not in web.get("/account/tokens/").content.decode(), "gone from the list"


def test_lists_and_details_show_no_secret(user) -> None:
    key = token_create(user=user, name="first")[1]
    client = api(key)
    made = client.post("/api/tokens/", {"name": "second", "days": 7}, format="json")
    assert made.status_code == 201
    body = made.json()
    assert set(body) == LISTED_KEYS | {"token"}
    assert made["Location"] == f"http://testserver/api/tokens/{body['id']}/"
    assert body["prefix"] == body["token"][:8]
    assert timedelta(days=6, hours=23) < (
        ApiToken.objects.get(pk=body["id"]).expires_at - timezone.now()) <= timedelta(days=7)

    listing = client.get("/api/tokens/")
    detail = client.get(f"/api/tokens/{body['id']}/")
    assert [row["name"] for row in listing.json()["results"]] == ["second", "first"]
    assert all(set(row) == LISTED_KEYS for row in listing.json()["results"])
    assert set(detail.json()) == LISTED_KEYS
    web = Client()
    web.force_login(user)
    page = web.get("/account/tokens/").content.decode()
    assert "second" in page
    assert body["prefix"] in page
    for text in (listing.content.decode(), detail.content.decode(), page):
        assert key not in text
        assert body["token"] not in text


def test_a_token_needs_a_name_and_lives_no_longer_than_the_setting(user, settings) -> None:
    settings.API_TOKEN_DAYS = 10
    client = api(token_create(user=user, name="admin")[1])
    assert client.post("/api/tokens/", {"name": " "}, format="json").status_code == 400
    too_long = client.post("/api/tokens/", {"name": "x", "days": 11}, format="json")
    assert too_long.status_code == 400
    assert "1 to 10 days" in too_long.json()["non_field_errors"][0]
    made = client.post("/api/tokens/", {"name": "default life"}, format="json")
    expires = ApiToken.objects.get(pk=made.json()["id"]).expires_at
    assert timedelta(days=9, hours=23) < expires - timezone.now() <= timedelta(days=10)


def test_someone_elses_token_is_not_found(user, other_user) -> None:
    alices, _ = token_create(user=user, name="alice's")
    bob = api(token_create(user=other_user, name="bob's")[1])
    assert bob.get(f"/api/tokens/{alices.pk}/").status_code == 404
    assert bob.delete(f"/api/tokens/{alices.pk}/").status_code == 404
    assert [row["name"] for row in bob.get("/api/tokens/").json()["results"]] == ["bob's"]
    web = Client()
    web.force_login(other_user)
    assert web.post(f"/account/tokens/{alices.pk}/revoke/").status_code == 404
    alices.refresh_from_db()
    assert alices.revoked_at is None


def test_making_and_revoking_are_in_the_persons_activity_log(user) -> None:
    token, key = token_create(user=user, name="laptop")
    assert api(key).delete(f"/api/tokens/{token.pk}/").status_code == 204
    log = Activity.objects.filter(project=project_personal(user=user)).order_by("pk")
    assert [(a.verb, a.actor_id) for a in log] == [("token_created", user.pk),
                                                   ("token_revoked", user.pk)]
    assert "laptop" in log[0].summary
    assert token.key_prefix in log[0].summary
    assert key not in " ".join(a.summary + repr(a.detail) for a in log)


def test_staff_revoke_in_the_admin_and_the_log_names_them(user, other_user) -> None:
    token, key = token_create(user=user, name="leaked")
    other_user.is_staff = other_user.is_superuser = True
    other_user.save()
    admin = Client()
    admin.force_login(other_user)
    listing = admin.get("/admin/api/apitoken/").content.decode()
    assert "leaked" in listing
    assert token.key_hash not in listing
    response = admin.post("/admin/api/apitoken/", {
        "action": "revoke", "_selected_action": [token.pk]})
    assert response.status_code == 302
    assert api(key).get("/api/datasets/").status_code == 401
    last = Activity.objects.filter(verb="token_revoked").get()
    assert (last.actor_id, last.project_id) == (other_user.pk, project_personal(user=user).pk)
    assert last.summary == f"bob revoked alice's API token “leaked” ({token.key_prefix}…)"
