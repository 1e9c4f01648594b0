"""A file larger than MAX_UPLOAD_SIZE in a body whose declared length passed the first check, or
in a chunked body that declared none, is counted while Django parses it and cut off at the
limit: 413 with the reason, nothing stored, no temporary file left, and no hop-by-hop header
that a WSGI server would turn into a 500. A chunked body within the limit is read whole."""

from __future__ import annotations

import io
import tempfile
from pathlib import Path
from wsgiref.util import is_hop_by_hop

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.handlers.exception import convert_exception_to_response
from django.http import HttpRequest, HttpResponse
from django.test import RequestFactory, override_settings
from django.urls import reverse

from core.middleware import UploadSizeLimitMiddleware
from dataset_management.models import Dataset

pytestmark = pytest.mark.django_db
LIMIT = 8 * 1024 * 1024
BOUNDARY = "medlitbot-chunked"
# 8.5 MB: past the limit, but the whole body is under the limit plus the 1 MB the middleware
# allows for the envelope, so only counting the file while it is read can catch it. Past
# FILE_UPLOAD_MAX_MEMORY_SIZE too, so Django spools it to a temporary file on the way.
BIG = b"title;abstract;label\n" + b"x" * (LIMIT + 512 * 1024)


@pytest.fixture
def upload_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "spool"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def hop_by_hop(response) -> list[str]:
    return [name for name in response.headers if is_hop_by_hop(name)]


@override_settings(MAX_UPLOAD_SIZE=LIMIT)
def test_the_upload_page_cuts_the_file_off_at_the_limit(alice_client, upload_tmp) -> None:
    response = alice_client.post(
        reverse("datasets:upload"),
        {"name": "Big", "file": SimpleUploadedFile("big.csv", BIG)},
        HTTP_REFERER="http://testserver/datasets/upload/",
    )
    assert response.status_code == 413
    page = response.content.decode()
    assert "larger than the limit of 8 MB (MAX_UPLOAD_SIZE_MB)" in page
    assert "Nothing was stored" in page
    # A plain link back: the Content-Security-Policy would block a javascript: URL.
    assert 'href="http://testserver/datasets/upload/"' in page
    assert "javascript:" not in page
    assert hop_by_hop(response) == []
    assert not Dataset.objects.exists()
    assert list(upload_tmp.iterdir()) == []


@override_settings(MAX_UPLOAD_SIZE=LIMIT)
def test_the_api_cuts_the_file_off_with_a_json_413(alice_client, upload_tmp) -> None:
    response = alice_client.post(
        "/api/datasets/", {"name": "Big", "file": SimpleUploadedFile("big.csv", BIG)}
    )
    assert response.status_code == 413
    assert "larger than the limit of 8 MB" in response.json()["detail"]
    assert hop_by_hop(response) == []
    assert not Dataset.objects.exists()
    assert list(upload_tmp.iterdir()) == []


@override_settings(MAX_UPLOAD_SIZE=1024)
def test_a_refusal_from_the_declared_length_has_no_hop_by_hop_header(alice_client) -> None:
    response = alice_client.post(
        reverse("datasets:upload"),
        {"name": "Huge", "file": SimpleUploadedFile("huge.csv", BIG)},
    )
    assert response.status_code == 413
    assert hop_by_hop(response) == []
    assert 'href="/"' in response.content.decode()  # no same-site referrer: the dashboard


def chunked_request(body: bytes):
    """A request as gunicorn hands over a chunked body: de-chunked, with no Content-Length."""
    request = RequestFactory().post(
        "/datasets/upload/", data=body, content_type=f"multipart/form-data; boundary={BOUNDARY}"
    )
    del request.META["CONTENT_LENGTH"]
    request.META.update({"HTTP_TRANSFER_ENCODING": "chunked", "wsgi.input_terminated": True,
                         "wsgi.input": io.BytesIO(body)})
    return request


def form_view(request: HttpRequest) -> HttpResponse:
    upload = request.FILES["file"]
    return HttpResponse(f"{request.POST['name']}: {upload.size} bytes")


def through_middleware(request: HttpRequest) -> HttpResponse:
    # As Django's handler runs it: an exception in the view becomes a response first.
    return UploadSizeLimitMiddleware(convert_exception_to_response(form_view))(request)


def multipart(file_bytes: bytes, epilogue: bytes = b"") -> bytes:
    return (
        f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nChunked\r\n"
        f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.csv\"\r\n"
        f"Content-Type: text/csv\r\n\r\n"
    ).encode() + file_bytes + f"\r\n--{BOUNDARY}--\r\n".encode() + epilogue


@override_settings(MAX_UPLOAD_SIZE=LIMIT)
def test_a_chunked_body_within_the_limit_reaches_the_view_whole() -> None:
    response = through_middleware(chunked_request(multipart(b"x" * 4096)))
    assert response.status_code == 200
    assert response.content == b"Chunked: 4096 bytes"


@override_settings(MAX_UPLOAD_SIZE=LIMIT)
def test_a_chunked_file_past_the_limit_is_cut_off(upload_tmp) -> None:
    response = through_middleware(chunked_request(multipart(BIG)))
    assert response.status_code == 413
    assert b"larger than the limit of 8 MB" in response.content
    assert list(upload_tmp.iterdir()) == []


@override_settings(MAX_UPLOAD_SIZE=1024)
def test_a_chunked_form_field_that_never_ends_is_read_no_further_than_the_cap() -> None:
    # Not a file, so no upload handler counts it: the cap on the body (the limit plus the 1 MB
    # envelope) is what stops it.
    body = (
        f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\n"
    ).encode() + b"j" * (2 * 1024 * 1024)
    request = chunked_request(body)
    response = through_middleware(request)
    assert response.status_code == 413
    assert b"larger than the limit of 0 MB" in response.content
    assert request.META["wsgi.input"].tell() <= 1024 + 1024 * 1024 + 1
