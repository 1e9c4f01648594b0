"""A dataset imported from PubMed XML (a real efetch answer) keeps every field the import read:
its CSV export has columns for the MeSH headings, publication types and keywords after its own
(PMCID, journal and authors as well), its JSON Lines export carries the whole record, and the
dataset page lists the fields under each sample. A RIS import's CSV export carries the record's
tags (rispy's names: type of reference, keywords) as columns, and its JSON Lines export the
whole entry."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.urls import reverse

from tests.plugins.datasets import FORMATS

pytestmark = pytest.mark.django_db


def download(client, dataset, fmt: str) -> str:
    response = client.get(reverse("datasets:export", args=[dataset.pk]), {"format": fmt})
    assert response.status_code == 200
    return b"".join(response.streaming_content).decode("utf-8").removeprefix("\ufeff")


def test_the_pubmed_csv_export_has_a_mesh_column(alice_client, import_file) -> None:
    dataset = import_file(FORMATS / "pubmed_efetch.xml", mapping={"unlabelled": True})
    rows = list(csv.DictReader(io.StringIO(download(alice_client, dataset, "csv"))))
    header = list(rows[0])
    assert header[:4] == ["row_id", "pmid", "doi", "pmcid"]
    assert header[-3:] == ["mesh", "publication_types", "keywords"]
    assert {"authors", "journal"} <= set(header)
    aids = next(row for row in rows if row["pmid"] == "12091962")
    mesh = aids["mesh"].split("; ")
    assert len(mesh) == 19
    assert mesh[:2] == ["AIDS Serodiagnosis", "Acquired Immunodeficiency Syndrome"]
    assert "Social Control, Formal" in mesh  # a heading with a comma stays one heading
    assert aids["publication_types"] == "Journal Article; Review"
    assert aids["keywords"] == "Health Care and Public Health; Legal Approach"
    assert aids["journal"] == "Social justice (San Francisco, Calif.)"
    assert aids["authors"] == "Olivero JM"

    lines = [json.loads(line) for line in download(alice_client, dataset, "jsonl").splitlines()]
    record = next(line["record"] for line in lines if line["identifiers"]["pmid"] == "12091962")
    assert record["mesh"] == mesh
    assert record["publication_types"] == ["Journal Article", "Review"]
    assert "pmcid" in record

    page = alice_client.get(reverse("datasets:detail", args=[dataset.pk])).content.decode()
    assert "Every field of the source" in page
    assert "<dt>mesh</dt><dd>AIDS Serodiagnosis; Acquired Immunodeficiency Syndrome" in page
    assert "<dt>publication_types</dt><dd>Journal Article; Review</dd>" in page


def test_a_ris_csv_export_carries_the_records_tags(alice_client, import_file) -> None:
    dataset = import_file(FORMATS / "refs.ris", mapping={"unlabelled": True})
    rows = list(csv.DictReader(io.StringIO(download(alice_client, dataset, "csv"))))
    assert {"type_of_reference", "keywords"} <= set(rows[0])
    statins = next(row for row in rows if row["title"] == "Statins after myocardial infarction")
    assert (statins["type_of_reference"], statins["keywords"]) == ("JOUR", "cardiovascular")

    lines = [json.loads(line) for line in download(alice_client, dataset, "jsonl").splitlines()]
    record = next(line["record"] for line in lines
                  if line["title"] == "Statins after myocardial infarction")
    assert (record["type_of_reference"], record["keywords"]) == ("JOUR", ["cardiovascular"])
