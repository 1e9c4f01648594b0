"""A batch's CSV keeps what the file brought: for a RIS library, its DOI, PMID, record ID,
authors, year and journal as columns; for a CSV, every other column, under its own name
("medical_abstract" is not renamed), after the result's own columns. The review still reads it."""

from __future__ import annotations

import pytest
from django.urls import reverse

from classification.review import services as review_services
from tests.batch_support import csv_rows
from tests.export_support import RIS_LIBRARY, ZOTERO_ABSTRACT, run_batch, write

pytestmark = pytest.mark.django_db

CSV_INPUT = (
    "record_no,medical_abstract,source_db,doi,screened_by\n"
    "A-1,\"Statins lowered recurrent coronary events, =risk halved.\",Embase,10.1/x1,ana\n"
    "A-2,Gait training improved recovery after stroke.,PubMed,10.1/x2,bo\n"
)


def download(client, batch) -> list[dict[str, str]]:
    response = client.get(reverse("classification:batch_download", args=[batch.pk.hex]),
                          {"format": "csv"})
    assert response.status_code == 200
    return csv_rows(b"".join(response.streaming_content))


def test_a_ris_batch_csv_carries_identifiers_and_citation(alice_client, user, media_root,
                                                         tmp_path, trained_model):
    batch = run_batch(owner=user, ml_model=trained_model,
                      path=write(tmp_path, "library.ris", RIS_LIBRARY))
    rows = download(alice_client, batch)
    first, second = rows[0], rows[1]
    assert first["doi"] == "10.1093/eurheartj/ehab001"
    assert first["record_id"] == "smith2021"
    assert first["authors"] == "Smith, John; Doe, Anne B."
    assert (first["year"], first["journal"]) == ("2021", "European Heart Journal")
    assert first["abstract"] == ZOTERO_ABSTRACT
    assert second["pmid"] == "31234567"
    assert (second["year"], second["journal"]) == ("2019", "Journal of Neuro-Oncology")


def test_a_csv_batch_keeps_every_column_by_its_own_name(alice_client, user, media_root,
                                                       tmp_path, trained_model):
    batch = run_batch(owner=user, ml_model=trained_model,
                      path=write(tmp_path, "articles.csv", CSV_INPUT))
    rows = download(alice_client, batch)
    header = list(rows[0])
    assert header[-5:] == ["record_no", "medical_abstract", "source_db", "doi", "screened_by"]
    assert [r["record_no"] for r in rows] == ["A-1", "A-2"]
    assert [r["source_db"] for r in rows] == ["Embase", "PubMed"]
    assert [r["screened_by"] for r in rows] == ["ana", "bo"]
    assert rows[1]["medical_abstract"] == "Gait training improved recovery after stroke."
    # Still the contract's columns first, and every cell safe for a spreadsheet.
    assert header[:4] == ["row", "id", "title", "abstract"]
    assert rows[0]["id"] == "10.1/x1"
    assert rows[0]["medical_abstract"].startswith("Statins lowered")
    assert all(r["predicted_labels"] for r in rows)
    assert review_services.review_items_ensure(batch=batch) == 2
