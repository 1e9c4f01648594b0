"""The full-text report's PDF at /screening/<id>/fulltext/<record>/pdf (issue 50).

Whoever may read the record's full text (a reviewer, and a viewer) gets the stored PDF's bytes
as application/pdf, inline, nosniff, not kept by a shared cache; a record without a PDF, a
record not at full text, and a person outside the project get 404; a blind reviewer before the
stop gets the record page's own 403. The record page carries the viewer: its module script, the
PDF's URL and the vendored pdf.js in data attributes, and the session's terms as JSON data,
while the page's Content-Security-Policy still forbids inline script and lets the worker come
only from this origin.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from screening import services
from tests.fulltext_reports_support import reports_make
from tests.pdf_support import pdf_bytes, report_attach

pytestmark = pytest.mark.django_db


def _client(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_pdf_is_served_inline_to_readers_and_404_to_others(user: Any, media_root: Path
                                                               ) -> None:
    made = reports_make(user, include_terms="randomised", exclude_terms="children")
    team, session = made.team, made.session
    with_pdf, without, excluded = made.records[1], made.records[0], made.records[-1]
    report_attach(user=team.reviewer, record=with_pdf, text="A randomised trial in children.")
    base = f"/screening/{session.pk}/fulltext"
    expected = pdf_bytes(["A randomised trial in children."])

    for person in (team.reviewer, team.viewer, team.owner):
        answer = _client(person).get(f"{base}/{with_pdf.pk}/pdf")
        assert answer.status_code == 200, person
        assert answer["Content-Type"] == "application/pdf"
        assert answer["Content-Disposition"].startswith("inline")
        assert answer["X-Content-Type-Options"] == "nosniff"
        assert "private" in answer["Cache-Control"]
        assert b"".join(answer.streaming_content) == expected

    rita = _client(team.reviewer)
    assert rita.get(f"{base}/{without.pk}/pdf").status_code == 404  # no PDF attached
    assert rita.get(f"{base}/{excluded.pk}/pdf").status_code == 404  # not at full text
    stranger = get_user_model().objects.create_user("sam", "sam@example.org", "pw-123456")
    assert _client(stranger).get(f"{base}/{with_pdf.pk}/pdf").status_code == 404
    assert rita.post(f"{base}/{with_pdf.pk}/pdf").status_code == 405

    page = rita.get(f"{base}/{with_pdf.pk}/")
    html = page.content.decode()
    viewer = re.search(r'<section class="ft-viewer" id="ft-viewer"([^>]*)>', html)
    assert viewer, html
    attributes = dict(re.findall(r'(data-[a-z-]+)="([^"]*)"', viewer.group(1)))
    assert attributes["data-pdf-url"] == f"{base}/{with_pdf.pk}/pdf"
    assert attributes["data-pdfjs"].endswith("/vendor/pdfjs/pdf.min.mjs")
    assert attributes["data-worker"].endswith("/vendor/pdfjs/pdf.worker.min.mjs")
    assert re.search(r'<script type="module" src="[^"]*/js/fulltext_viewer\.js">', html)
    for name, terms in (("include", ["randomised"]), ("exclude", ["children"])):
        data = re.search(rf'<script id="ft-{name}-terms" type="application/json">(.*?)</script>',
                         html)
        assert data
        assert json.loads(data.group(1)) == terms
    # Every served file the viewer needs is there, as its right type.
    for src in (attributes["data-pdfjs"], attributes["data-worker"],
                re.search(r'src="([^"]*fulltext_viewer\.js)"', html).group(1)):
        served = rita.get(src)
        assert served.status_code == 200, src
        assert served["Content-Type"].startswith("text/javascript"), served["Content-Type"]
    policy = dict(part.strip().split(" ", 1) for part in
                  page["Content-Security-Policy"].split(";") if part.strip())
    assert policy["script-src"] == "'self'"  # no 'unsafe-inline', no 'unsafe-eval'
    assert policy["worker-src"] == "'self'"
    assert "'unsafe-inline'" not in policy["style-src"]

    # The record page without a PDF has no viewer.
    assert 'id="ft-viewer"' not in rita.get(f"{base}/{without.pk}/").content.decode()


def test_a_blind_reviewer_gets_the_record_pages_403_until_the_stop(user: Any, media_root: Path
                                                                   ) -> None:
    made = reports_make(user, blind=True)
    team, session, record = made.team, made.session, made.records[0]
    report_attach(user=team.maintainer, record=record)
    url = f"/screening/{session.pk}/fulltext/{record.pk}/pdf"
    rita = _client(team.reviewer)
    assert rita.get(url).status_code == 403
    assert rita.get(f"/screening/{session.pk}/fulltext/{record.pk}/").status_code == 403
    assert _client(team.maintainer).get(url).status_code == 200
    services.session_blinding_end(user=team.owner, session=session)
    assert rita.get(url).status_code == 200
