"""Accounts come from an administrator or an invitation link; /signup/ exists only where
settings.OPEN_SIGNUP turns it on."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.urls import reverse

pytestmark = pytest.mark.django_db

NEW_PERSON = {"username": "dave", "email": "dave@example.org",
              "password1": "Dave-signs-up-42", "password2": "Dave-signs-up-42"}


def test_open_sign_up_is_off_by_default(client) -> None:
    assert settings.OPEN_SIGNUP is False
    assert client.get("/signup/").status_code == 404
    assert client.post("/signup/", NEW_PERSON).status_code == 404
    assert not get_user_model().objects.filter(username="dave").exists()


def test_the_setting_opens_sign_up_with_djangos_password_checks(client, settings) -> None:
    settings.OPEN_SIGNUP = True
    assert client.get(reverse("projects:signup")).status_code == 200
    weak = client.post("/signup/", {**NEW_PERSON, "password1": "dave", "password2": "dave"})
    assert weak.status_code == 400
    response = client.post("/signup/", NEW_PERSON)
    assert response["Location"] == reverse("dashboard")
    dave = get_user_model().objects.get(username="dave")
    assert client.get(reverse("dashboard")).context["user"] == dave
    assert "dave&#x27;s project" in client.get(reverse("projects:list")).content.decode()
