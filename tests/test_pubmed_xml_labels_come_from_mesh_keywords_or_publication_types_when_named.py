"""A PubMed XML file's labels come from the field a person names: MeSH headings, keywords or
publication types (each a list, so "Aged, 80 and over" stays one label). Unnamed, none of them
is taken as labels, not even publication types, whose few repeated values look like classes."""

from __future__ import annotations

import pytest

from dataset_management.mapping import mapping_detect
from dataset_management.selectors import dataset_sample_rows
from tests.plugins.datasets import FORMATS

pytestmark = pytest.mark.django_db
EFETCH = FORMATS / "pubmed_efetch.xml"


def test_mesh_headings_are_the_labels_when_named(import_file):
    dataset = import_file(FORMATS / "pubmed_efetch_structured.xml",
                          mapping={"label_column": "mesh"})
    assert dataset.label_field == "mesh"
    assert "aged, 80 and over" in dataset.label_names
    assert "pancreatic neoplasms" in dataset.label_names
    assert len(dataset.label_names) == 21
    assert dataset.is_multilabel


def test_keywords_are_the_labels_when_named(import_file):
    dataset = import_file(EFETCH, mapping={"label_column": "keywords"})
    assert dataset.label_names == ["health care and public health", "legal approach"]
    # The second article has no keywords: in a multi-label dataset it is kept as an example of
    # none of these, unless the import is asked to drop such rows.
    assert dataset.row_count == 2
    assert dataset.report["no_label_rows"]["action"] == "kept"


def test_an_article_without_keywords_is_dropped_when_asked(import_file):
    dropped = import_file(EFETCH, mapping={"label_column": "keywords", "no_label_rows": "drop"})
    assert dropped.row_count == 1
    assert dropped.report["dropped_by_reason"] == {"no label": 1}


def test_publication_types_are_the_labels_when_named(import_file):
    dataset = import_file(EFETCH, mapping={"label_column": "publication_types"})
    assert dataset.label_names == ["journal article", "review"]
    rows = dataset_sample_rows(dataset=dataset, n=2)
    assert [row["labels"] for row in rows] == [["journal article", "review"], ["journal article"]]


def test_unnamed_they_are_never_guessed_as_labels():
    columns = ["pmid", "doi", "pmcid", "title", "abstract", "journal", "year", "authors", "mesh",
               "publication_types", "keywords"]
    sample = [{"title": f"Title {i}", "abstract": "An abstract long enough " * 5,
               "mesh": ["Humans", "Adult"][: 1 + i % 2], "keywords": ["asthma"],
               "publication_types": ["Journal Article", "Review"][: 1 + i % 2]}
              for i in range(20)]
    mapping = mapping_detect(columns=columns, sample_rows=sample, file_format="pubmed_xml")
    assert (mapping.title, mapping.abstract, mapping.label) == ("title", "abstract", None)
    # The same columns from a CSV would be guessed: the exception is PubMed XML's own.
    assert mapping_detect(columns=columns, sample_rows=sample, file_format="csv").label
