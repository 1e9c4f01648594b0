"""PRISMA a journal takes (issue 50): the diagram's PNG is 300 dpi unless `?dpi=` asks for
another resolution from 72 to 600 (its pHYs chunk says so and its pixels follow); any other
dpi is a 400 saying the range. The PDF (page and API) is one vector page whose text holds the
counts, as the SVG's does."""

from __future__ import annotations

import io

import pytest
from django.urls import reverse
from PIL import Image
from pypdf import PdfReader

from screening import prisma_diagram
from screening.prisma import prisma_counts
from tests.prisma_support import merged_session
from tests.screening_review_support import client_of
from tests.screening_state_support import api_of
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db


def _png(client, session, query: str = ""):
    return client.get(reverse("screening:prisma_download", args=[session.pk, "png"]) + query)


def test_the_png_is_300_dpi_by_default_and_72_to_600_when_asked(team) -> None:  # noqa: F811
    session = merged_session(team)
    client = client_of(team.viewer)
    height = prisma_diagram.diagram_layout(prisma_counts(session)).height
    for query, dpi in (("", 300), ("?dpi=72", 72), ("?dpi=600", 600)):
        answer = _png(client, session, query)
        assert answer["Content-Type"] == "image/png"
        image = Image.open(io.BytesIO(answer.content))
        assert [round(d) for d in image.info["dpi"]] == [dpi, dpi], query
        assert image.size == (round(prisma_diagram.WIDTH / 100 * dpi),
                              round(height / 100 * dpi)), query
    api_png = api_of(team.viewer).get(reverse("api:screening_export",
                                              args=[session.pk, "prisma-png"]))
    assert [round(d) for d in Image.open(io.BytesIO(api_png.content)).info["dpi"]] == [300, 300]


@pytest.mark.parametrize("dpi", ["71", "601", "3.5", "high", "-300"])
def test_a_dpi_out_of_range_is_refused_saying_the_range(team, dpi) -> None:  # noqa: F811
    answer = _png(client_of(team.viewer), merged_session(team), f"?dpi={dpi}")
    assert answer.status_code == 400
    assert "from 72 to 600" in answer.content.decode()


def test_the_pdf_is_one_page_whose_text_holds_the_counts(team) -> None:  # noqa: F811
    session = merged_session(team)
    page = client_of(team.viewer).get(reverse("screening:prisma_download",
                                              args=[session.pk, "pdf"]))
    api = api_of(team.viewer).get(reverse("api:screening_export", args=[session.pk,
                                                                        "prisma-pdf"]))
    for answer in (page, api):
        assert answer["Content-Type"] == "application/pdf"
        assert answer.content.startswith(b"%PDF")
        pages = PdfReader(io.BytesIO(answer.content)).pages
        assert len(pages) == 1
        assert not list(pages[0].images)  # drawn, not a picture of the drawing
        text = " ".join(pages[0].extract_text().split())
        for line in ("Records identified (n = 21)", "pubmed_search.nbib (n = 7)",
                     "Duplicate records removed (n = 6)", "Not yet screened (n = 15)",
                     "Reports of included studies (n = 0)"):
            assert line in text, line
    assert page["Content-Disposition"] == f'attachment; filename="prisma-{session.pk}.pdf"'
