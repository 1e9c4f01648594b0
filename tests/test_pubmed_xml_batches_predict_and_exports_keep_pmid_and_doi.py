"""A PubMed XML file goes through a batch and `manage.py predict FILE --out`, and every export
of its rows keeps `pmid` and `doi` columns (empty where an article has no DOI): the batch CSV,
RIS and JSON Lines, predict's CSV, and the dataset's own CSV download."""

from __future__ import annotations

import csv
import gzip
import io
import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from tests.batch_support import csv_rows
from tests.export_support import PREFIX, ris_parse, run_batch
from tests.plugins.datasets import FORMATS

pytestmark = pytest.mark.django_db
EFETCH = FORMATS / "pubmed_efetch.xml"
PMIDS = ["12091962", "9997"]
DOIS = ["", "10.1016/0005-2795(76)90109-4"]


def download(client, url: str, fmt: str) -> str:
    response = client.get(url, {"format": fmt})
    assert response.status_code == 200
    content = (b"".join(response.streaming_content) if response.streaming
               else response.content)
    return content.decode("utf-8-sig")


@pytest.fixture
def xml_batch(user, media_root, tmp_path, trained_model):
    path = tmp_path / "efetch.xml.gz"
    path.write_bytes(gzip.compress(EFETCH.read_bytes()))
    return run_batch(owner=user, ml_model=trained_model, path=path)


def test_a_batch_classifies_it_and_its_csv_keeps_pmid_doi_and_the_indexing(
    alice_client, xml_batch, trained_model
):
    assert (xml_batch.total, xml_batch.processed, xml_batch.skipped) == (2, 2, 0)
    url = reverse("classification:batch_download", args=[xml_batch.pk.hex])
    rows = csv_rows(download(alice_client, url, "csv").encode())
    assert [row["pmid"] for row in rows] == PMIDS
    assert [row["doi"] for row in rows] == DOIS
    assert [row["id"] for row in rows] == PMIDS
    assert rows[0]["keywords"] == "Health Care and Public Health; Legal Approach"
    assert rows[1]["mesh"].startswith("Binding Sites; Chromatium; ")
    assert rows[0]["journal"] == "Social justice (San Francisco, Calif.)"
    assert all(row["predicted_labels"] or row["note"] == "" for row in rows)
    assert {f"p_{name}" for name in trained_model.label_names} <= set(rows[0])


def test_its_ris_and_json_lines_keep_pmid_and_doi(alice_client, xml_batch):
    url = reverse("classification:batch_download", args=[xml_batch.pk.hex])
    entries = ris_parse(download(alice_client, url, "ris"))
    assert [e["accession_number"] for e in entries] == PMIDS
    assert [e.get("doi", "") for e in entries] == DOIS
    assert entries[0]["name_of_database"] == "PubMed"
    assert "Legal Approach" in entries[0]["keywords"]
    assert any(k.startswith(PREFIX) for k in entries[0]["keywords"]) or entries[0]["notes"]
    lines = [json.loads(line) for line in download(alice_client, url, "jsonl").splitlines()]
    assert [line["identifiers"] for line in lines] == [
        {"pmid": PMIDS[0]}, {"pmid": PMIDS[1], "doi": DOIS[1]}]
    assert lines[1]["source_format"] == "pubmed_xml"
    assert lines[1]["record"]["doi"] == DOIS[1]


def test_predict_out_writes_pmid_and_doi_columns(tmp_path, trained_model):
    out = tmp_path / "out.csv"
    stdout = io.StringIO()
    call_command("predict", str(trained_model.pk), str(EFETCH), "--out", str(out),
                 stdout=stdout)
    assert "Wrote 2 predictions" in stdout.getvalue()
    with out.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0])[-3:] == ["note", "pmid", "doi"]
    assert [(row["id"], row["pmid"], row["doi"]) for row in rows] == [
        (PMIDS[0], PMIDS[0], DOIS[0]), (PMIDS[1], PMIDS[1], DOIS[1])]
    assert rows[0]["text"] == "The treatment of AIDS behind the walls of correctional facilities."


def test_the_dataset_csv_keeps_pmid_and_doi_columns(alice_client, import_file):
    dataset = import_file(EFETCH)
    url = reverse("datasets:export", args=[dataset.pk])
    rows = list(csv.DictReader(io.StringIO(download(alice_client, url, "csv"))))
    assert list(rows[0])[:3] == ["row_id", "pmid", "doi"]
    assert [(row["pmid"], row["doi"]) for row in rows] == list(zip(PMIDS, DOIS, strict=True))


def test_the_doi_column_stays_when_no_article_has_one(alice_client, import_file, tmp_path):
    # The real file cut to its first article, which has no DOI.
    body = EFETCH.read_bytes()
    second = body.index(b"<PubmedArticle>", body.index(b"</PubmedArticle>"))
    path = tmp_path / "no_doi.xml"
    path.write_bytes(body[:second] + body[body.rindex(b"</PubmedArticle>") + 16:])
    dataset = import_file(path)
    assert dataset.row_count == 1
    url = reverse("datasets:export", args=[dataset.pk])
    rows = list(csv.DictReader(io.StringIO(download(alice_client, url, "csv"))))
    assert [(row["pmid"], row["doi"]) for row in rows] == [(PMIDS[0], "")]
