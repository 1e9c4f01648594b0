"""/healthz and /readyz answer anonymous probes that call by IP address over plain HTTP, with
DEBUG off, although ALLOWED_HOSTS refuses that Host header for every other page."""

from __future__ import annotations

import pytest
from django.test import Client


@pytest.mark.django_db
def test_healthz_is_200_json_without_login() -> None:
    response = Client().get("/healthz")

    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert response["Cache-Control"].startswith("max-age=0")
    assert response["X-Content-Type-Options"] == "nosniff"


@pytest.mark.django_db
def test_a_probe_calling_by_pod_ip_is_answered_while_pages_refuse_that_host(settings) -> None:
    assert settings.DEBUG is False
    client = Client(HTTP_HOST="10.42.0.7:8000")

    assert client.get("/accounts/login/").status_code == 400  # ALLOWED_HOSTS still holds
    assert client.get("/healthz").status_code == 200
    assert client.get("/readyz").status_code in (200, 503)
    assert client.get("/readyz").json()["checks"]["database"] == {"ok": True}


@pytest.mark.django_db
def test_probes_are_not_redirected_to_https(settings) -> None:
    settings.SECURE_SSL_REDIRECT = True

    assert Client().get("/accounts/login/").status_code == 301
    assert Client().get("/healthz").status_code == 200
    assert Client().get("/healthz/").status_code == 200


@pytest.mark.django_db
def test_healthz_refuses_writes() -> None:
    assert Client().post("/healthz").status_code == 405
