"""On several machines the bucket is a dependency like the database: /readyz and the doctor
name it when it does not answer, and say nothing of it on one machine."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from django.test import Client

from classification import doctor

pytestmark = pytest.mark.django_db


def test_one_machine_has_no_storage_check_and_the_doctor_says_how_to_share() -> None:
    assert "storage" not in Client().get("/readyz").json()["checks"]
    check = doctor.check_storage()
    assert check.status == doctor.OK
    assert "local disk only" in check.detail
    assert "SHARED_STORAGE_URL" in check.detail


def test_a_shared_folder_that_is_gone_fails_readyz_and_the_doctor(shared_storage: Path) -> None:
    shared_storage.mkdir()
    body = Client().get("/readyz").json()
    assert body["checks"]["storage"] == {"ok": True}
    assert doctor.check_storage().status == doctor.OK

    shutil.rmtree(shared_storage)  # the mount went away
    response = Client().get("/readyz")
    assert response.status_code == 503
    assert "storage" in response.json()["failing"]
    error = response.json()["checks"]["storage"]["error"]
    assert error == "shared storage unreachable: its folder is not mounted"
    assert str(shared_storage) not in response.content.decode()  # /readyz answers anyone
    check = doctor.check_storage()
    assert check.status == doctor.FAIL
    assert str(shared_storage) in check.detail
