"""Many reports' PDFs at once (issue 50): the full-text list's "Attach many reports" page and
POST /api/screening/<id>/fulltext/bulk/.

Each file is matched to a record at full text: by the DOI in its name (the "/" written "_"),
by a PMID as its name, by "PMID: ..." on its first page, by the record's title on its first
page whatever its case, hyphens and line breaks, and (over the API, in a ZIP) by a DOI in its
document information. Each is attached as the single upload attaches one, with its text. The
answer says, per file, the record and the rule, or why not: a PDF of a record excluded at
title/abstract is not matched, one naming two records is ambiguous, a broken PDF is refused
(whether or not its name matched), a second file for a record attached in the same upload or
before is refused, a ZIP's non-PDF entry is refused; nothing is kept of any of them (no report,
no file). A PDF over FULLTEXT_MAX_PDF_MB is refused unread, and past the most files one
upload takes the rest are refused in one line. A viewer may not bulk-upload, nor a blind
reviewer before the stop.
"""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.test import APIClient

from api.tokens import token_create
from screening.models import FullTextReport
from tests.fulltext_reports_support import reports_make
from tests.pdf_support import broken_pdf, pdf_bytes

pytestmark = pytest.mark.django_db


def _pdf(name: str, data: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="application/pdf")


def _pdf_with_info(text: str, info: str) -> bytes:
    """A one-page PDF whose document information's /Subject is `info` (where publishers put
    the DOI), written by pypdf."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_bytes([text]))))
    writer.add_metadata({"/Subject": info})
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _rows(html: str) -> dict[str, tuple[str, str, str]]:
    """file name -> (outcome, record id, how) from the results table."""
    out = {}
    for row in re.findall(r'<tr data-outcome="([a-z_]+)"(?: data-record="(\d+)")?>'
                          r'<td class="name">([^<]*)</td>.*?<td class="how">([^<]*)</td>',
                          html, re.S):
        outcome, record, name, how = row
        out[name] = (outcome, record, how)
    return out


def test_pdfs_are_matched_by_doi_pmid_or_title_and_the_rest_keep_nothing(
        user: Any, media_root: Path) -> None:
    made = reports_make(user)
    team, session, (statins, exercise, aspirin, diet, vitamin, smoking) = (
        made.team, made.session, made.records)
    rita = Client()
    rita.force_login(team.reviewer)
    listed = rita.get(f"/screening/{session.pk}/fulltext/").content.decode()
    assert f'href="/screening/{session.pk}/fulltext/bulk/"' in listed
    files = [
        _pdf("10.1000_statins.2020.01.pdf", pdf_bytes(["Statins: methods and results."])),
        _pdf("32345678.pdf", pdf_bytes(["Exercise after infarction."])),
        _pdf("scan-0042.pdf", pdf_bytes(["Cohort report. PMID: 33456789. Methods."])),
        _pdf("download (3).pdf", pdf_bytes([
            "Original article MEDITERRANEAN DIET AND THE RISK OF TYPE-2 DIA-",
            "BETES IN OLDER WOMEN. Methods follow."])),
        _pdf("10.1000_varenicline.pdf", pdf_bytes(["Smoking cessation with varenicline."])),
        _pdf("both.pdf", pdf_bytes(["See PMID: 31234567 and PMID 32345678."])),
        _pdf("10.1000_vitamin-d.pdf", broken_pdf()),
        _pdf("broken.pdf", broken_pdf()),
        _pdf("32345678 (1).pdf", pdf_bytes(["Exercise after infarction, again."])),
    ]
    answer = rita.post(f"/screening/{session.pk}/fulltext/bulk/", {"files": files})
    assert answer.status_code == 200
    html = answer.content.decode()
    assert _rows(html) == {
        "10.1000_statins.2020.01.pdf": ("attached", str(statins.pk), "doi"),
        "32345678.pdf": ("attached", str(exercise.pk), "pmid"),
        "scan-0042.pdf": ("attached", str(aspirin.pk), "pmid"),
        "download (3).pdf": ("attached", str(diet.pk), "title"),
        "10.1000_varenicline.pdf": ("not_matched", "", "–"),
        "both.pdf": ("ambiguous", "", "pmid"),
        "10.1000_vitamin-d.pdf": ("refused", str(vitamin.pk), "doi"),
        "broken.pdf": ("refused", "", "–"),
        "32345678 (1).pdf": ("refused", str(exercise.pk), "pmid"),
    }, html
    assert "4 of 9 files attached." in html
    assert "could not be read" in html
    assert "matches records 1, 2" in html
    assert "32345678.pdf in this upload matched record 2 already" in html
    reports = {r.record_id: r for r in FullTextReport.objects.all()}
    assert set(reports) == {statins.pk, exercise.pk, aspirin.pk, diet.pk}
    assert reports[exercise.pk].text == "Exercise after infarction."  # the first file's
    assert reports[diet.pk].pages == 2
    assert reports[diet.pk].uploaded_by == team.reviewer
    assert len(list(media_root.rglob("*.pdf"))) == 4  # nothing of the refused files

    # Over the API, in a ZIP: a DOI in the document information, a non-PDF entry, a record
    # that has its report already.
    bundle = io.BytesIO()
    with zipfile.ZipFile(bundle, "w") as archive:
        archive.writestr("reports/vd.pdf", _pdf_with_info(
            "Supplementation and fractures.", "Osteoporos Int. doi:10.1000/vitamin-d."))
        archive.writestr("reports/readme.txt", "not a report")
        archive.writestr("reports/10.1000_statins.2020.01.pdf", pdf_bytes(["Statins again."]))
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token_create(user=team.reviewer, name='t')[1]}")
    url = f"/api/screening/{session.pk}/fulltext/bulk/"
    answer = api.post(url, {"files": [SimpleUploadedFile("batch.zip", bundle.getvalue(),
                                                         "application/zip")]},
                      format="multipart")
    assert answer.status_code == 200, answer.content
    results = answer.json()["results"]
    assert answer.json()["attached"] == 1
    assert [(r["name"], r["outcome"], r["how"], r["record"]) for r in results] == [
        ("batch.zip/reports/vd.pdf", "attached", "doi", vitamin.pk),
        ("batch.zip/reports/readme.txt", "refused", "", None),
        ("batch.zip/reports/10.1000_statins.2020.01.pdf", "refused", "doi", statins.pk),
    ]
    assert "has its report already" in results[2]["detail"]
    assert FullTextReport.objects.get(record=statins).text == "Statins: methods and results."
    assert FullTextReport.objects.get(record=vitamin).text == "Supplementation and fractures."
    assert api.post(url, {}, format="multipart").status_code == 400
    assert len(list(media_root.rglob("*.pdf"))) == 5
    assert not FullTextReport.objects.filter(record=smoking).exists()


def test_a_viewer_and_a_blind_reviewer_before_the_stop_may_not_bulk_upload(
        user: Any, media_root: Path) -> None:
    made = reports_make(user, blind=True)
    team, session = made.team, made.session
    url = f"/screening/{session.pk}/fulltext/bulk/"

    def upload() -> dict[str, Any]:
        return {"files": [_pdf("10.1000_statins.2020.01.pdf", pdf_bytes(["Statins."]))]}

    for person in (team.viewer, team.reviewer):
        client = Client()
        client.force_login(person)
        assert client.get(url).status_code == 403
        assert client.post(url, upload()).status_code == 403
    assert not FullTextReport.objects.exists()
    mona = Client()
    mona.force_login(team.maintainer)
    assert mona.get(url).status_code == 200
    answer = mona.post(url, upload())
    assert _rows(answer.content.decode())["10.1000_statins.2020.01.pdf"][0] == "attached"


def test_a_pdf_over_the_size_limit_and_files_past_the_count_are_refused_unread(
        user: Any, media_root: Path, settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from screening import fulltext_bulk

    made = reports_make(user)
    settings.FULLTEXT_MAX_PDF_MB = 1
    monkeypatch.setattr(fulltext_bulk, "MAX_FILES", 2)
    bundle = io.BytesIO()
    with zipfile.ZipFile(bundle, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("10.1000_statins.2020.01.pdf", pdf_bytes(["big"], pad_to=1536 * 1024))
        archive.writestr("32345678.pdf", pdf_bytes(["Exercise after infarction."]))
        for n in range(5):
            archive.writestr(f"extra-{n}.pdf", pdf_bytes(["Aspirin."]))
    rita = Client()
    rita.force_login(made.team.reviewer)
    answer = rita.post(f"/screening/{made.session.pk}/fulltext/bulk/", {"files": [
        SimpleUploadedFile("all.zip", bundle.getvalue(), "application/zip")]})
    rows = _rows(answer.content.decode())
    assert list(rows) == ["all.zip/10.1000_statins.2020.01.pdf", "all.zip/32345678.pdf",
                          "all.zip/extra-0.pdf"]
    assert [r[0] for r in rows.values()] == ["refused", "attached", "refused"]
    html = answer.content.decode()
    assert "over the limit of 1 MB (FULLTEXT_MAX_PDF_MB)" in html
    assert "Over 2 files in one upload" in html
    assert [r.record_id for r in FullTextReport.objects.all()] == [made.records[1].pk]
    assert len(list(media_root.rglob("*.pdf"))) == 1
