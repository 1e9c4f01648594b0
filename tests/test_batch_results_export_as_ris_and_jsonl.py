"""A batch's results download as CSV, RIS or JSON Lines, on the batch page and over the API: a
PubMed (.nbib) batch comes out as RIS records with their PMIDs, DOIs and citations, and as JSON
Lines with each record's identifiers, original fields and prediction."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from classification.batches import storage
from tests.batch_support import create_batch, csv_rows
from tests.export_support import NBIB_PUBMED, PREFIX, ris_parse, run_batch, write

pytestmark = pytest.mark.django_db
PMIDS = ["35000001", "35000002", "35000003"]


@pytest.fixture
def nbib_batch(user, media_root, tmp_path, trained_model):
    return run_batch(owner=user, ml_model=trained_model,
                     path=write(tmp_path, "pubmed-export.nbib", NBIB_PUBMED))


def api(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


def body(response) -> bytes:
    return b"".join(response.streaming_content)


def test_an_nbib_batch_exports_to_ris_with_its_pmids(alice_client, nbib_batch, trained_model):
    response = alice_client.get(
        reverse("classification:batch_download", args=[nbib_batch.pk.hex]), {"format": "ris"})
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/x-research-info-systems")
    assert 'filename="pubmed-export-predictions.ris"' in response["Content-Disposition"]
    entries = ris_parse(body(response).decode())
    assert [e["accession_number"] for e in entries] == PMIDS
    assert [e["id"] for e in entries] == PMIDS
    assert {e["name_of_database"] for e in entries} == {"PubMed"}
    first = entries[0]
    assert first["type_of_reference"] == "JOUR"
    assert first["title"] == ("Statin therapy after acute coronary syndrome and recurrent "
                              "myocardial infarction.")
    assert first["authors"] == ["Garcia, Elena", "Chen, Wei"]
    assert (first["year"], first["journal_name"]) == ("2022",
                                                      "Journal of the American College of "
                                                      "Cardiology")
    assert first["doi"] == "10.1016/j.jacc.2021.11.001"
    assert (first["volume"], first["number"], first["start_page"]) == ("79", "2", "120-131")
    assert "Myocardial Infarction/*drug therapy" in first["keywords"]
    predicted = [k.removeprefix(PREFIX) for k in first["keywords"] if k.startswith(PREFIX)]
    assert predicted
    assert set(predicted) <= set(trained_model.label_names)
    assert entries[1]["doi"] == "10.1111/epi.16600"
    assert entries[2]["authors"] == ["Khan A"]
    assert "doi" not in entries[2]


def test_the_json_lines_keep_identifiers_fields_record_and_prediction(
    alice_client, nbib_batch, trained_model
):
    response = alice_client.get(
        reverse("classification:batch_download", args=[nbib_batch.pk.hex]), {"format": "jsonl"})
    assert response.status_code == 200
    lines = [json.loads(line) for line in body(response).decode().splitlines()]
    assert [line["identifiers"]["pmid"] for line in lines] == PMIDS
    first = lines[0]
    assert first["identifiers"] == {"pmid": "35000001", "doi": "10.1016/j.jacc.2021.11.001"}
    assert (first["row"], first["year"], first["source_format"]) == (1, "2022", "nbib")
    assert first["record"]["AD"] == [
        "Department of Cardiology, University Hospital, 28000 Madrid, Spain. Very long "
        "affiliation lines wrap in MEDLINE exports."]
    assert first["record"]["AID"] == ["10.1016/j.jacc.2021.11.001 [doi]",
                                      "S0735-1097(21)08000-1 [pii]"]
    assert set(first["probabilities"]) == set(trained_model.label_names)
    assert set(first["predicted_labels"]) <= set(trained_model.label_names)
    assert first["note"] == ""


def test_the_csv_stays_as_it_was_with_the_pmid_as_id(alice_client, nbib_batch):
    response = alice_client.get(reverse("classification:batch_download",
                                        args=[nbib_batch.pk.hex]))
    assert response["Content-Type"] == "text/csv"
    rows = csv_rows(body(response))
    assert [row["id"] for row in rows] == PMIDS
    assert list(rows[0])[:4] == ["row", "id", "title", "abstract"]


def test_the_batch_page_offers_the_three_downloads(alice_client, nbib_batch):
    page = alice_client.get(reverse("classification:batch_detail", args=[nbib_batch.pk.hex]))
    html = page.content.decode()
    url = reverse("classification:batch_download", args=[nbib_batch.pk.hex])
    for anchor in ('id="batch-download"', f'{url}?format=ris', f'{url}?format=jsonl'):
        assert anchor in html
    assert alice_client.get(url, {"format": "xml"}).status_code == 404


def test_the_api_serves_each_format_and_refuses_others(nbib_batch, api_token, other_api_token):
    client = api(api_token)
    url = f"/api/batches/{nbib_batch.pk.hex}/result/"
    expected = {"csv": "text/csv", "ris": "application/x-research-info-systems",
                "jsonl": "application/jsonl"}
    for fmt, content_type in expected.items():
        response = client.get(url, {"format": fmt})
        assert response.status_code == 200, (fmt, response.content)
        assert response["Content-Type"].startswith(content_type)
        assert f"pubmed-export-predictions.{fmt}" in response["Content-Disposition"]
    assert PMIDS[0].encode() in body(client.get(url, {"format": "ris"}))
    refused = client.get(url, {"format": "xml"})
    assert refused.status_code == 400
    assert "format" in refused.json()
    assert api(other_api_token).get(url, {"format": "ris"}).status_code == 404


def test_before_completion_the_api_answers_409_for_every_format(
    user, media_root, tmp_path, trained_model, api_token
):
    batch = create_batch(owner=user, ml_model=trained_model,
                         path=write(tmp_path, "pubmed.nbib", NBIB_PUBMED))
    for fmt in ("csv", "ris", "jsonl"):
        response = api(api_token).get(f"/api/batches/{batch.pk.hex}/result/", {"format": fmt})
        assert response.status_code == 409
        assert response.json()["status"] == "queued"


def test_a_batch_finished_before_records_were_kept_offers_its_csv_only(
    alice_client, nbib_batch, api_token
):
    (storage.absolute(nbib_batch.result_path).with_name(storage.RECORDS_NAME)).unlink()
    url = reverse("classification:batch_download", args=[nbib_batch.pk.hex])
    assert alice_client.get(url).status_code == 200
    assert alice_client.get(url, {"format": "ris"}).status_code == 404
    response = api(api_token).get(f"/api/batches/{nbib_batch.pk.hex}/result/",
                                  {"format": "jsonl"})
    assert response.status_code == 404
    assert "download the CSV" in response.json()["detail"]


def test_text_with_line_breaks_stays_inside_its_ris_field(
    alice_client, user, media_root, tmp_path, trained_model
):
    records = [{"pmid": "1", "title": "Heart failure\nTI  - injected",
                "abstract": "Line one\r\nER  - \nline three about stroke"},
               {"pmid": "2", "title": "", "abstract": ""}]
    source = write(tmp_path, "articles.jsonl", "".join(json.dumps(r) + "\n" for r in records))
    batch = run_batch(owner=user, ml_model=trained_model, path=source)
    response = alice_client.get(reverse("classification:batch_download", args=[batch.pk.hex]),
                                {"format": "ris"})
    entries = ris_parse(body(response).decode())
    assert [e["accession_number"] for e in entries] == ["1", "2"]
    assert entries[0]["title"] == "Heart failure TI  - injected"
    assert entries[0]["abstract"] == "Line one ER  -  line three about stroke"
    assert entries[1]["notes"] == [f"{PREFIX} skipped: no text"]
