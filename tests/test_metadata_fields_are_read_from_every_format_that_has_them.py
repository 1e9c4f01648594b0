"""engine/metadata.metadata_extract finds journal, MeSH, publication types and keywords in the
record of every format that keeps them: PubMed XML's own keys, MEDLINE tags (MH, PT, OT, JT),
rispy's names for RIS tags (KW, JO, T2), and a CSV's columns; values as lists, MeSH
descriptors without their subheadings."""

from __future__ import annotations

from pathlib import Path

import pytest

from classification.engine.metadata import metadata_extract, metadata_fields_present
from classification.mlmodels.prediction import article_metadata
from dataset_management.articles import articles_read

FORMATS = Path(__file__).resolve().parent / "fixtures" / "formats"


def first_article_metadata(name: str) -> dict[str, list[str]]:
    with articles_read(path=FORMATS / name, filename=name) as articles:
        return article_metadata(next(iter(articles)))


def test_pubmed_xml_gives_all_four_fields() -> None:
    meta = first_article_metadata("pubmed_efetch_trial.xml")
    assert meta["journal"] == ["The New England journal of medicine"]
    assert "Budesonide" in meta["mesh"]
    assert "Randomized Controlled Trial" in meta["publication_types"]


def test_ris_gives_journal_and_keywords() -> None:
    assert first_article_metadata("screened_kw_labels.ris") == {
        "journal": ["Test Journal"], "keywords": ["include"]}


def test_medline_gives_mesh_descriptors_without_subheadings() -> None:
    assert first_article_metadata("pubmed.nbib") == {"mesh": ["Cardiovascular"]}


@pytest.mark.parametrize(("record", "expected"), [
    ({"MH": ["Neoplasms/*drug therapy", "Humans"], "PT": ["Review"], "OT": ["statins"],
      "JT": ["The Lancet"], "TA": ["Lancet"]},
     {"journal": ["The Lancet"], "mesh": ["Neoplasms", "Humans"],
      "publication_types": ["Review"], "keywords": ["statins"]}),
    ({"journal_name": "BMJ", "keywords": ["a", "b"], "secondary_title": "Other"},
     {"journal": ["BMJ"], "keywords": ["a", "b"]}),
    ({"MeSH Terms": "Humans; Adult|Aged", "Publication Type": "Clinical Trial",
      "title": "x"},
     {"mesh": ["Humans", "Adult", "Aged"], "publication_types": ["Clinical Trial"]}),
    ({}, {}),
])
def test_records_of_each_shape(record: dict, expected: dict) -> None:
    assert metadata_extract(citation=None, record=record) == expected


def test_the_citations_journal_comes_first_and_blank_values_are_absent() -> None:
    meta = metadata_extract(citation={"journal": "Gut"},
                            record={"journal": "Other", "mesh": ["", " "], "keywords": None})
    assert meta == {"journal": ["Gut"]}


def test_a_field_counts_as_present_when_enough_rows_have_it() -> None:
    rows = [{"journal": ["J"], "mesh": ["M"]}] * 3 + [{"journal": ["J"]}] * 7
    assert metadata_fields_present(rows) == ["journal", "mesh"]
    assert metadata_fields_present(rows, min_share=0.5) == ["journal"]
    assert metadata_fields_present([]) == []
