"""The full-text pages: the list of records at full text links each report's page, where a
reviewer attaches the PDF through the form; its extracted text is shown as text (markup in a
PDF stays characters), a broken PDF is refused with the reason on the page, and a decision
needs its exclusion reason there too."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from screening import desk, selectors, services
from screening.models import FullTextReport
from tests.pdf_support import broken_pdf, pdf_bytes
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db


def test_pages_attach_show_and_refuse(team, media_root: Path) -> None:  # noqa: F811
    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="FT",
                                      labels=["oncological"])
    desk.session_desk_update(user=team.maintainer, session=session, criteria="",
                             include_terms="tumour", exclude_terms="script",
                             exclusion_reasons="Wrong population", screeners=[])
    record = selectors.record_next(user=team.reviewer, session=session)
    services.decision_record(user=team.reviewer, record=record, values={"oncological": "yes"})
    rita = Client()
    rita.force_login(team.reviewer)
    listing = rita.get(f"/screening/{session.pk}/fulltext/").content.decode()
    page_url = f"/screening/{session.pk}/fulltext/{record.pk}/"
    assert f'href="{page_url}"' in listing

    def attach(data: bytes) -> str:
        return rita.post(page_url, {"action": "upload", "file": SimpleUploadedFile(
            "r.pdf", data, "application/pdf")}, follow=True).content.decode()

    shown = attach(pdf_bytes(["<script>alert(1)</script> Tumour response in 40 adults"]))
    # The text as characters, the session's terms marked in it as on the screen page.
    assert ('&lt;<mark class="term exclude">script</mark>&gt;alert(1)&lt;/'
            '<mark class="term exclude">script</mark>&gt; '
            '<mark class="term include">Tumour</mark> response in 40 adults') in shown
    assert "<script>alert(1)" not in shown
    assert "Retrieved: 1 page," in shown
    refused = attach(broken_pdf())
    assert "This PDF could not be read" in refused
    assert "Nothing was kept" in refused
    assert FullTextReport.objects.get(record=record).text.endswith("Tumour response in 40 adults")

    said = rita.post(page_url, {"action": "decide", "label": "oncological",
                                "value-oncological": "no", "reason-oncological": ""},
                     follow=True).content.decode()
    assert "Choose an exclusion reason for oncological" in said
    rita.post(page_url, {"action": "decide", "label": "oncological", "value-oncological": "no",
                         "reason-oncological": "Wrong population"})
    record.refresh_from_db()
    assert record.fulltext_reasons == {"oncological": "Wrong population"}
    listing = rita.get(f"/screening/{session.pk}/fulltext/").content.decode()
    assert "oncological: no" in listing
