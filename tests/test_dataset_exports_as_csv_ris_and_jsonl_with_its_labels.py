"""A labelled dataset downloads from its page as CSV (formula-safe, with its identifiers), RIS
(every original record, its labels as keywords behind the prefix) or JSON Lines; only its
owner can download it."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.http import StreamingHttpResponse
from django.urls import reverse

from tests.export_support import PREFIX, RIS_LIBRARY, ris_parse, without_added, write

pytestmark = pytest.mark.django_db
# Four records with text, labelled by their keywords (the second and fourth: two labels each).
LABELLED = RIS_LIBRARY.replace("KW  - cardiology\nKW  - beta-blockers\n", "KW  - cardio\n") \
    .replace("KW  - Glioblastoma/drug therapy\n", "KW  - neuro\nKW  - onco\n") \
    .replace("PY  - 2018\n", "PY  - 2018\nKW  - hepato\n") \
    .replace("N1  - An empty reference: no title, no abstract\n",
             "TI  - Seizures in children with liver disease\nKW  - neuro\nKW  - hepato\n")


@pytest.fixture
def ris_dataset(import_file, tmp_path):
    return import_file(write(tmp_path, "library.ris", LABELLED),
                       mapping={"label_column": "keywords"})


def download(client, dataset, fmt: str):
    response = client.get(reverse("datasets:export", args=[dataset.pk]), {"format": fmt})
    assert response.status_code == 200, response
    assert isinstance(response, StreamingHttpResponse)  # made as it is sent, never whole
    stem = dataset.original_filename.rsplit(".", 1)[0]
    assert f'filename="{stem}-labelled.{fmt}"' in response["Content-Disposition"]
    return b"".join(response.streaming_content).decode("utf-8")


def test_the_ris_gives_every_record_back_with_its_labels_as_keywords(alice_client, ris_dataset):
    assert ris_dataset.label_names == ["cardio", "hepato", "neuro", "onco"]
    exported = ris_parse(download(alice_client, ris_dataset, "ris"))
    original = ris_parse(LABELLED)
    assert len(exported) == 4
    by_title = {e["title"]: e for e in exported}
    for entry in original:
        kept, keywords, notes = without_added(by_title[entry["title"]])
        assert kept == entry
        assert sorted(k.removeprefix(PREFIX) for k in keywords) == sorted(entry["keywords"])
        assert notes == []


def test_the_csv_and_the_json_lines_carry_identifiers_labels_and_split(alice_client,
                                                                       ris_dataset):
    rows = list(csv.DictReader(io.StringIO(download(alice_client, ris_dataset, "csv")
                                           .removeprefix("\ufeff"))))
    assert list(rows[0])[:12] == ["row_id", "pmid", "id", "doi", "accession", "title",
                                  "abstract", "authors", "year", "journal", "labels", "split"]
    # Then every tag of the RIS records, by rispy's names (issue 38: no field left behind).
    assert {"type_of_reference", "keywords", "notes", "accession_number",
            "unknown_tag"} <= set(list(rows[0])[12:])
    by_title = {row["title"]: row for row in rows}
    first = by_title["Beta-blockers after myocardial infarction in heart failure"]
    assert (first["id"], first["doi"], first["labels"]) == (
        "smith2021", "10.1093/eurheartj/ehab001", "cardio")
    assert first["authors"] == "Smith, John; Doe, Anne B."
    assert by_title["Temozolomide and radiotherapy for glioblastoma: survival in a "
                    "multicentre cohort"]["labels"] == "neuro|onco"
    assert {row["split"] for row in rows} <= {"train", "validation", "test"}

    lines = [json.loads(line) for line in
             download(alice_client, ris_dataset, "jsonl").splitlines()]
    assert [line["row_id"] for line in lines] == [0, 1, 2, 3]
    second = next(line for line in lines if line["identifiers"].get("pmid"))
    assert second["labels"] == ["neuro", "onco"]
    assert second["record"]["accession_number"] == "31234567"
    assert "probabilities" not in second


def test_the_page_links_the_downloads_and_only_the_owner_gets_them(
    alice_client, bob_client, ris_dataset
):
    url = reverse("datasets:export", args=[ris_dataset.pk])
    page = alice_client.get(reverse("datasets:detail", args=[ris_dataset.pk])).content.decode()
    for fmt in ("csv", "ris", "jsonl"):
        assert f"{url}?format={fmt}" in page
        assert bob_client.get(url, {"format": fmt}).status_code == 404
    assert alice_client.get(url, {"format": "bib"}).status_code == 404


def test_a_csv_export_is_safe_against_formula_injection(alice_client, import_file, tmp_path):
    source = write(tmp_path, "hostile.csv",
                   "pmid,title,abstract,labels\n1,=HYPERLINK(\"x\"),heart text,a\n"
                   "2,@SUM(1),brain text,b\n3,plain,+liver text,a\n")
    dataset = import_file(source)
    text = download(alice_client, dataset, "csv").removeprefix("\ufeff")
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0][:3] == ["row_id", "pmid", "title"]
    cells = [cell for row in rows[1:] for cell in row]
    assert not any(cell.startswith(("=", "+", "-", "@")) for cell in cells)
    assert "'=HYPERLINK(\"x\")" in cells
