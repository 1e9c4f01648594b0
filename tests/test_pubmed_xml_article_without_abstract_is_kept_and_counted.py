"""An article without an abstract (a PubMed record of a review with only its title) is kept with
its title, and the import report counts it, on the dataset page too."""

from __future__ import annotations

import pytest
from django.urls import reverse

from dataset_management.readers import read_records
from dataset_management.selectors import dataset_sample_rows
from tests.plugins.datasets import FORMATS

pytestmark = pytest.mark.django_db
EFETCH = FORMATS / "pubmed_efetch.xml"


def test_the_reader_counts_it_once_the_file_is_read():
    with read_records(EFETCH, filename="pubmed_efetch.xml") as stream:
        assert stream.details["no_abstract"] == 0
        records = list(stream.records)
        assert [values["abstract"] == "" for _, values in records] == [True, False]
        assert stream.details["no_abstract"] == 1
        assert stream.details["notes"] == ["1 article has no abstract; kept with its title."]


def test_it_is_imported_with_its_title_and_the_report_says_so(import_file, alice_client):
    dataset = import_file(EFETCH)
    assert dataset.row_count == 2
    first = dataset_sample_rows(dataset=dataset, n=1)[0]
    assert first["abstract"] == ""
    assert first["text"] == "The treatment of AIDS behind the walls of correctional facilities."
    assert "1 article has no abstract; kept with its title." in dataset.report["notes"]
    page = alice_client.get(reverse("datasets:detail", args=[dataset.pk])).content.decode()
    assert "1 article has no abstract; kept with its title." in page


def test_a_file_with_every_abstract_adds_no_note(import_file):
    dataset = import_file(FORMATS / "pubmed_efetch_trial.xml")
    assert not any("no abstract" in note for note in dataset.report.get("notes") or [])


def test_a_file_where_no_article_has_an_abstract_is_still_imported(import_file, tmp_path):
    # The real file cut to its first article, the one without an abstract.
    body = EFETCH.read_bytes()
    second = body.index(b"<PubmedArticle>", body.index(b"</PubmedArticle>"))
    path = tmp_path / "titles_only.xml"
    path.write_bytes(body[:second] + body[body.rindex(b"</PubmedArticle>") + 16:])
    dataset = import_file(path)
    assert dataset.row_count == 1
    assert dataset.report["notes"][-1] == "1 article has no abstract; kept with its title."
