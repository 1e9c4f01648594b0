from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser


@pytest.fixture
def user(db: None) -> AbstractUser:
    return get_user_model().objects.create_user("alice", "alice@example.org", "alice-pass-123")


@pytest.fixture
def other_user(db: None) -> AbstractUser:
    return get_user_model().objects.create_user("bob", "bob@example.org", "bob-pass-123")
