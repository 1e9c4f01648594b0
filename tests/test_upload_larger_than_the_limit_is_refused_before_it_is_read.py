"""An upload past MAX_UPLOAD_SIZE_MB is refused from its Content-Length with a 413 that says
why, before a byte of the body is read or stored, in the pages and the API alike."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.http import HttpRequest, HttpResponse
from django.test import RequestFactory, override_settings
from django.urls import reverse

from core.middleware import UploadSizeLimitMiddleware
from dataset_management.models import Dataset

pytestmark = pytest.mark.django_db
TWO_MB = b"title;abstract;label\n" + b"x" * (2 * 1024 * 1024)


@override_settings(MAX_UPLOAD_SIZE=1024)
def test_the_upload_page_answers_413_and_saves_nothing(alice_client) -> None:
    response = alice_client.post(
        reverse("datasets:upload"),
        {"name": "Huge", "file": SimpleUploadedFile("huge.csv", TWO_MB)},
    )
    assert response.status_code == 413
    page = response.content.decode()
    assert "This upload is 2 MB; the limit is 0 MB (MAX_UPLOAD_SIZE_MB)" in page
    assert "Nothing was stored" in page
    assert not Dataset.objects.exists()


@override_settings(MAX_UPLOAD_SIZE=1024)
def test_the_api_answers_413_with_a_json_reason(alice_client) -> None:
    response = alice_client.post(
        "/api/datasets/", {"name": "Huge", "file": SimpleUploadedFile("huge.csv", TWO_MB)}
    )
    assert response.status_code == 413
    assert "the limit is 0 MB" in response.json()["detail"]
    assert not Dataset.objects.exists()


@override_settings(MAX_UPLOAD_SIZE=1024)
def test_the_body_is_never_read() -> None:
    request = RequestFactory().post(
        "/datasets/upload/", {"file": SimpleUploadedFile("huge.csv", TWO_MB)}
    )

    def view(req: HttpRequest) -> HttpResponse:
        raise AssertionError(f"the view must not run (it would parse {len(req.FILES)} files)")

    response = UploadSizeLimitMiddleware(view)(request)
    assert response.status_code == 413
    assert request.META["wsgi.input"].read_started is False


@override_settings(MAX_UPLOAD_SIZE=4 * 1024 * 1024)
def test_an_upload_within_the_limit_reaches_the_view(alice_client) -> None:
    response = alice_client.post(
        reverse("datasets:upload"),
        {"name": "Fine", "file": SimpleUploadedFile("fine.csv", TWO_MB)},
    )
    assert response.status_code != 413
