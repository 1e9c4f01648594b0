""""Add files" on a dataset's page adds the articles the files hold that the dataset does not,
and says how many, in a new version (the dataset itself is never rewritten): a PubMed XML of 9
new records adds 9; a file that overlaps partly adds only its new articles, its copies counted
as its duplicates removed; a file of records already there adds nothing, is refused in those
words, and leaves nothing behind. A labelled dataset keeps only labelled articles: new records
that no record labels (a PubMed XML has no label column) are refused in those words, not as
"nothing new", and "prediction only" adds them to a prediction-only version instead, as a
collection uploaded as prediction only keeps them beside a labelled file's records."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from dataset_management.collection import COUNTS_KEY
from dataset_management.models import Dataset
from dataset_management.selectors import dataset_rows_iter
from tests.import_support import import_run_last
from tests.job_support import dataset_digest
from tests.plugins.datasets import FORMATS, media_files

pytestmark = pytest.mark.django_db

FIRST_PMID = 39000000


def pubmed_xml(path: Path, numbers: range | list[int]) -> Path:
    """A PubMed efetch file of articles `numbers` (PMID FIRST_PMID + n, a title of its own)."""
    articles = "".join(
        f"<PubmedArticle><MedlineCitation Status=\"MEDLINE\" Owner=\"NLM\">"
        f"<PMID Version=\"1\">{FIRST_PMID + n}</PMID><Article PubModel=\"Print\">"
        f"<Journal><JournalIssue><PubDate><Year>2024</Year></PubDate></JournalIssue>"
        f"<Title>Trials</Title></Journal><ArticleTitle>Randomised trial {n} of drug "
        f"{chr(65 + n % 26)}{n} for condition {n * 7}</ArticleTitle><Abstract><AbstractText>"
        f"Patients in trial {n} were given drug {n} or placebo; outcome {n * 3} improved."
        f"</AbstractText></Abstract></Article></MedlineCitation></PubmedArticle>"
        for n in numbers)
    path.write_text(f'<?xml version="1.0"?>\n<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD '
                    f'PubMedArticle, 1st January 2024//EN" "https://dtd.nlm.nih.gov/ncbi/pubmed/'
                    f'out/pubmed_240101.dtd">\n<PubmedArticleSet>{articles}</PubmedArticleSet>\n',
                    encoding="utf-8")
    return path


def upload(client, paths: list[Path], **fields: str) -> Dataset:
    handles = [path.open("rb") for path in paths]
    try:
        client.post(reverse("datasets:upload_collection"), {"files": handles, "name": "Review",
                                                            **fields})
    finally:
        for handle in handles:
            handle.close()
    job = import_run_last()
    assert job.status == "completed", job.reason
    return Dataset.objects.get(pk=job.dataset_id)


def add(client, dataset: Dataset, path: Path, **fields: str):
    with path.open("rb") as handle:
        answer = client.post(reverse("datasets:add_files", args=[dataset.pk]),
                             {"files": [handle], **fields})
    job = import_run_last()
    assert answer["Location"] == reverse("datasets:import_detail", args=[job.pk])
    return job


def imports_left() -> set[str]:
    return {path for path in media_files() if path.startswith("imports/")}


def test_a_pubmed_xml_of_nine_new_records_adds_nine_and_the_page_says_so(
        media_root, alice_client, tmp_path) -> None:
    dataset = upload(alice_client, [pubmed_xml(tmp_path / "first.xml", range(12))],
                     unlabelled="on")
    before = dataset_digest(dataset)
    job = add(alice_client, dataset, pubmed_xml(tmp_path / "update.xml", range(100, 109)))
    assert job.status == "completed", job.reason
    grown = Dataset.objects.get(pk=job.dataset_id)
    assert (grown.pk != dataset.pk, grown.row_count) == (True, 21)
    counts = grown.report[COUNTS_KEY]
    assert counts["articles_added"] == 9
    assert (counts["records_identified"], counts["duplicates_removed"]) == (21, 0)
    assert [(f["name"], f["identified"], f["duplicates_removed"], f["added"])
            for f in counts["files"]] == [("first.xml", 12, 0, 12), ("update.xml", 9, 0, 9)]
    page = alice_client.get(reverse("datasets:detail", args=[grown.pk])).content.decode()
    assert "21 records identified · 0 duplicates removed" in page
    assert "made from “Review”, 9 new articles added" in page
    pmids = {row["identifiers"]["pmid"] for row in dataset_rows_iter(dataset=grown)}
    assert {str(FIRST_PMID + n) for n in range(100, 109)} <= pmids
    assert dataset_digest(Dataset.objects.get(pk=dataset.pk)) == before

    # A file that overlaps partly: 4 articles already there (by PMID), 3 new.
    job = add(alice_client, grown, pubmed_xml(tmp_path / "overlap.xml", [0, 5, 101, 108,
                                                                         200, 201, 202]))
    assert job.status == "completed", job.reason
    third = Dataset.objects.get(pk=job.dataset_id)
    assert third.row_count == 24
    counts = third.report[COUNTS_KEY]
    assert counts["articles_added"] == 3
    assert counts["files"][-1] == {
        "name": "overlap.xml", "format": "pubmed_xml", "identified": 7, "duplicates_removed": 4,
        "added": 3, "near_matches": 0, "dropped": {}}
    assert (counts["records_identified"], counts["duplicates_removed"]) == (28, 4)
    assert (third.report["rows_read"], third.report["rows_dropped"]) == (28, 4)


def test_a_file_of_records_already_there_adds_nothing_and_leaves_nothing(
        media_root, alice_client, tmp_path) -> None:
    dataset = upload(alice_client, [pubmed_xml(tmp_path / "first.xml", range(12))],
                     unlabelled="on")
    job = add(alice_client, dataset, pubmed_xml(tmp_path / "again.xml", [1, 4, 9]))
    assert (job.status, job.reason) == ("failed", (
        f"The files add no article to dataset 'Review' (id {dataset.pk}): each of their 3 "
        "record(s) is already in it (the same PMID, DOI or text; see “How duplicates are "
        "found”) or has no text. Nothing was saved."))
    assert list(Dataset.objects.values_list("pk", flat=True)) == [dataset.pk]
    assert imports_left() == set()


def test_a_labelled_dataset_refuses_new_records_without_labels_unless_prediction_only(
        media_root, alice_client, tmp_path) -> None:
    dataset = upload(alice_client, [FORMATS / "comma.csv"])
    assert (dataset.is_labelled, dataset.row_count) == (True, 12)
    detail = alice_client.get(reverse("datasets:detail", args=[dataset.pk])).content.decode()
    assert 'id="add-files-unlabelled"' in detail
    update = pubmed_xml(tmp_path / "update.xml", range(9))
    job = add(alice_client, dataset, update)
    assert job.status == "failed"
    assert job.reason == (
        "9 new record(s) of update.xml carry no label, and “Review” is labelled (training "
        "data): a labelled collection keeps only labelled articles, so they would be dropped. "
        "Nothing was saved. Tick “prediction only” to add them to a prediction-only version "
        "(“Review” keeps its labels), or add a file that labels them.")
    assert "add nothing" not in job.reason
    assert list(Dataset.objects.values_list("pk", flat=True)) == [dataset.pk]
    assert imports_left() == set()

    job = add(alice_client, dataset, update, unlabelled="on")
    assert job.status == "completed", job.reason
    version = Dataset.objects.get(pk=job.dataset_id)
    assert (version.row_count, version.is_labelled) == (21, False)
    assert version.report[COUNTS_KEY]["articles_added"] == 9
    assert Dataset.objects.get(pk=dataset.pk).is_labelled  # the labelled one stays as it was


def test_the_api_adds_files_as_prediction_only_too(media_root, alice_client, api_token,
                                                     tmp_path) -> None:
    dataset = upload(alice_client, [FORMATS / "comma.csv"])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token}")
    with pubmed_xml(tmp_path / "update.xml", range(9)).open("rb") as handle:
        answer = client.post("/api/datasets/collections/", {
            "files": [handle], "dataset": dataset.pk, "unlabelled": "true"})
    assert answer.status_code == 202, answer.content
    job = import_run_last()
    assert job.status == "completed", job.reason
    body = client.get(answer.json()["url"]).json()
    version = client.get(body["dataset_url"] + "?expand=report").json()
    assert version["row_count"] == 21
    assert version["report"][COUNTS_KEY]["articles_added"] == 9
    assert re.search(r"\(\+ update\.xml\)$", version["name"])


def test_a_prediction_only_upload_keeps_the_records_without_labels_beside_a_labelled_file(
        media_root, alice_client, tmp_path) -> None:
    dataset = upload(alice_client, [FORMATS / "comma.csv",
                                    pubmed_xml(tmp_path / "search.xml", range(9))],
                     unlabelled="on")
    assert (dataset.row_count, dataset.is_labelled) == (21, False)
    assert [(f["name"], f["added"], f["dropped"]) for f in dataset.report[COUNTS_KEY]["files"]
            ] == [("comma.csv", 12, {}), ("search.xml", 9, {})]
