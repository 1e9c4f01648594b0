"""The full-text stage's upload (issue 35, item 6), through the API.

Records included at title/abstract by both reviewers, or unsure from both, reach full text; one
both excluded does not (404). A real PDF, written byte by byte by the test, is kept with its
extracted text (201; GET answers its text_chars). A broken PDF, one past the page limit, one
past the size limit, and hostile ones whose streams inflate past the setting (one stream, or
many small ones) each get 400 with a sentence naming the bound, and nothing is kept: no file
is added under MEDIA_ROOT and the report still holds the first PDF's text.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from api.tokens import token_create
from screening import selectors, services
from screening.models import FullTextReport
from tests.pdf_support import broken_pdf, pdf_bytes
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db


def _api(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_create(user=user, name='t')[1]}")
    return client


def _both(team, session, value):  # noqa: F811
    record = selectors.record_next(user=team.reviewer, session=session)
    for person in (team.reviewer, team.reviewer2):
        services.decision_record(user=person, record=record, values={"oncological": value})
    return record


def _upload(client, url, data, name="report.pdf"):
    return client.post(url, {"file": SimpleUploadedFile(name, data, "application/pdf")},
                       format="multipart")


def test_a_real_pdf_is_kept_and_a_bad_one_keeps_nothing(
        team, media_root: Path, settings, django_capture_on_commit_callbacks) -> None:  # noqa: F811
    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="FT",
                                      labels=["oncological"], reviewers_per_record=2)
    included, unsure, excluded = (_both(team, session, v) for v in ("yes", "unsure", "no"))
    # Blind, Rita would wait for the stop to reach full text (issue 50): not what this is about.
    services.session_blinding_end(user=team.owner, session=session)
    rita = _api(team.reviewer)
    base = f"/api/screening/{session.pk}/fulltext/"
    listed = rita.get(base).json()["results"]
    assert [r["record"] for r in listed] == sorted(
        [included.pk, unsure.pk], key=lambda pk: [r["record"] for r in listed].index(pk))
    assert {r["record"] for r in listed} == {included.pk, unsure.pk}
    assert rita.get(f"{base}{excluded.pk}/").status_code == 404

    text = "Methods: 120 adults with a solid tumour (randomised)."
    url = f"{base}{included.pk}/"
    answer = _upload(rita, url, pdf_bytes([text, "Results: survival improved."]))
    assert answer.status_code == 201, answer.content
    body = rita.get(url).json()
    extracted = "\n\n".join([text, "Results: survival improved."])
    assert body["text_chars"] == len(extracted)
    assert (body["status"], body["pages"], body["uploaded_by"]) == ("retrieved", 2, "rita")
    report = FullTextReport.objects.get(record=included)
    assert report.text == extracted
    assert (media_root / report.pdf_path).read_bytes().startswith(b"%PDF-1.4")
    kept = sorted(p.name for p in media_root.rglob("*.pdf"))

    settings.FULLTEXT_MAX_PAGES = 3
    settings.FULLTEXT_MAX_PDF_MB = 1
    settings.FULLTEXT_MAX_INFLATED_MB = 2
    for data, says in [
        (broken_pdf(), "could not be read"),
        (b"Just some text, no PDF at all", "not a PDF"),
        (pdf_bytes(["p"] * 4), "4 pages, over the limit of 3 (FULLTEXT_MAX_PAGES)"),
        (pdf_bytes(["big"], pad_to=1536 * 1024), "over the limit of 1 MB (FULLTEXT_MAX_PDF_MB)"),
        (pdf_bytes(["bomb"], inflate_to=64 * 1024 * 1024), "FULLTEXT_MAX_INFLATED_MB"),
    ]:
        refused = _upload(rita, url, data)
        assert refused.status_code == 400, (says, refused.content)
        assert says in refused.json()["detail"], refused.json()
        assert "Nothing was kept" in refused.json()["detail"]
    # Streams each under the bound that inflate past it between them: counted page by page.
    settings.FULLTEXT_MAX_PAGES = 50
    with django_capture_on_commit_callbacks(execute=True):  # the replaced file goes on commit
        answer = _upload(rita, url, pdf_bytes(["a", "b"], inflate_to=900 * 1024))
    assert answer.status_code == 201, answer.content  # 1.8 MB in all: under 2 MB
    refused = _upload(rita, url, pdf_bytes(["a", "b", "c"], inflate_to=900 * 1024))
    assert refused.status_code == 400
    assert "inflate past 2 MB (FULLTEXT_MAX_INFLATED_MB)" in refused.json()["detail"]
    report.refresh_from_db()
    assert report.text == "a\n\nb"  # the last accepted PDF's text, unchanged
    assert len(sorted(p.name for p in media_root.rglob("*.pdf"))) == len(kept)  # replaced
    assert rita.post(url, {}, format="multipart").status_code == 400
