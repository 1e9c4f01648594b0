"""A collection keeps every field its import read, as a single import does: a PubMed XML search
(a real efetch answer) merged with a RIS export that holds one of its articles again (the same
DOI, a longer abstract, so the RIS record is the one kept) gives articles whose records carry
PubMed's MeSH headings and publication types and the RIS entry's tags together; the CSV export
has a MeSH column and the dataset page lists them under the article. A new version keeps them:
files added to the collection, then a near match merged by a person."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from django.urls import reverse

from dataset_management.collection import (
    COUNTS_KEY,
    collection_add_files,
    collection_create,
    near_matches_decide,
)
from dataset_management.collection_merge import Source
from dataset_management.selectors import dataset_rows_iter
from projects.services import project_create
from tests.plugins.datasets import FORMATS

pytestmark = pytest.mark.django_db

PUBMED = FORMATS / "pubmed_efetch.xml"
AIDS = "12091962"   # title only, 19 MeSH headings, two keywords, no DOI, 1990
HEME = "9997"       # an abstract, a DOI, 13 MeSH headings, no keywords
HEME_DOI = "10.1016/0005-2795(76)90109-4"
HEME_TITLE = ("Magnetic studies of Chromatium flavocytochrome C552. A mechanism for heme-flavin "
              "interaction.")


def heme_abstract() -> str:
    text = PUBMED.read_text(encoding="utf-8")
    return text.split("<AbstractText>", 1)[1].split("</AbstractText>", 1)[0]


def write_ris(path: Path, records: list[dict[str, str]]) -> Path:
    with path.open("w", encoding="utf-8") as out:
        for record in records:
            out.write("".join(f"{tag}  - {value}\n" for tag, value in record.items()))
            out.write("ER  - \n\n")
    return path


def rows_by_pmid(dataset) -> dict[str, dict]:
    return {row["identifiers"].get("pmid", ""): row for row in dataset_rows_iter(dataset=dataset)}


def test_a_collection_of_pubmed_and_ris_keeps_both_sources_fields(
        media_root, user, alice_client, tmp_path) -> None:
    embase = write_ris(tmp_path / "embase.ris", [
        {"TY": "JOUR", "TI": HEME_TITLE, "AB": heme_abstract() + " Erratum noted in 1977.",
         "PY": "1976", "DO": HEME_DOI, "KW": "heme-flavin interaction", "DB": "Embase"}])
    project = project_create(user=user, name="Review team")
    collection, _ = collection_create(
        owner=user, project=project, name="PubMed and Embase",
        sources=[Source(path=PUBMED, name=PUBMED.name), Source(path=embase, name=embase.name)])

    assert collection.report[COUNTS_KEY]["merged_by"] == {"doi": 1}
    rows = rows_by_pmid(collection)
    assert set(rows) == {AIDS, HEME}
    heme = rows[HEME]["record"]
    assert heme["abstract"].endswith("Erratum noted in 1977.")  # the RIS record was kept
    assert heme["matched_by"] == ["doi"]
    assert heme["source_files"] == [PUBMED.name, embase.name]
    assert heme["type_of_reference"] == "JOUR"                 # the RIS entry's own tags
    assert heme["keywords"] == ["heme-flavin interaction"]
    assert heme["name_of_database"] == "Embase"
    assert len(heme["mesh"]) == 13                             # lent by its PubMed duplicate
    assert heme["mesh"][:2] == ["Binding Sites", "Chromatium"]
    assert heme["publication_types"] == ["Journal Article"]
    aids = rows[AIDS]["record"]
    assert len(aids["mesh"]) == 19
    assert "Social Control, Formal" in aids["mesh"]
    assert aids["keywords"] == ["Health Care and Public Health", "Legal Approach"]

    response = alice_client.get(reverse("datasets:export", args=[collection.pk]),
                                {"format": "csv"})
    table = b"".join(response.streaming_content).decode("utf-8").removeprefix("\ufeff")
    exported = {row["pmid"]: row for row in csv.DictReader(io.StringIO(table))}
    assert exported[HEME]["mesh"].startswith("Binding Sites; Chromatium; ")
    assert exported[HEME]["type_of_reference"] == "JOUR"
    assert exported[AIDS]["publication_types"] == "Journal Article; Review"
    page = alice_client.get(reverse("datasets:detail", args=[collection.pk])).content.decode()
    assert "<dt>mesh</dt><dd>Binding Sites; Chromatium; " in page
    assert "<dt>type_of_reference</dt><dd>JOUR</dd>" in page

    # Files added: the same AIDS article from another database five years off (a near
    # match: the same title, different years) and an article of its own.
    scopus = write_ris(tmp_path / "scopus.ris", [
        {"TY": "JOUR", "TI": "The treatment of AIDS behind the walls of correctional "
                             "facilities.", "PY": "1995", "KW": "prisons", "DB": "Scopus"},
        {"TY": "CHAP", "TI": "Screening in prisons: a review of thirty years", "PY": "2001",
         "AB": "We review screening programmes in prisons since 1970.", "DB": "Scopus"}])
    grown = collection_add_files(dataset=collection, sources=[
        Source(path=scopus, name=scopus.name)], user=user)
    pairs = grown.report[COUNTS_KEY]["near_matches"]
    assert [pair["reason"] for pair in pairs] == ["different year (1990 / 1995)"]
    rows = rows_by_pmid(grown)
    assert len(rows[HEME]["record"]["mesh"]) == 13
    assert rows[HEME]["record"]["type_of_reference"] == "JOUR"
    assert len(rows[AIDS]["record"]["mesh"]) == 19
    chapter = next(row for row in dataset_rows_iter(dataset=grown)
                   if row["title"].startswith("Screening in prisons"))
    assert chapter["record"]["type_of_reference"] == "CHAP"

    merged = near_matches_decide(dataset=grown, decisions={0: "merge"}, user=user)
    rows = rows_by_pmid(merged)
    aids = rows[AIDS]["record"]
    assert len(aids["mesh"]) == 19
    assert aids["keywords"] == ["Health Care and Public Health", "Legal Approach"]
    assert aids["name_of_database"] == "Scopus"               # the field it lacked, lent
    assert aids["matched_by"] == ["confirmed"]
    assert len(rows[HEME]["record"]["mesh"]) == 13
