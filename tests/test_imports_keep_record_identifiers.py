"""Every import format keeps what identifies a record (PMID, DOI, RIS ID, accession number), its
citation (authors, year, journal) and the original record, stored with the dataset's rows; a
dataset stored before those columns existed still reads, shows and exports."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from openpyxl import Workbook

from dataset_management.articles import articles_read
from dataset_management.selectors import (
    dataset_identifier_kinds,
    dataset_rows_file,
    dataset_rows_iter,
    dataset_sample_rows,
    dataset_split_examples,
)
from tests.export_support import NBIB_PUBMED, RIS_LIBRARY, write

pytestmark = pytest.mark.django_db

HEADER = ["PMID", "DOI", "id", "Title", "Abstract", "Authors", "Publication Year", "Journal",
          "labels"]
ROWS = [
    ["1001", "https://doi.org/10.1/a", "r1", "Statins after infarction",
     "Statin therapy lowered events.", "Smith J, Doe AB", "2020", "Lancet", "cardio"],
    ["1002", "doi:10.1/b", "r2", "Stroke rehabilitation", "Gait training helped.",
     "Novak, Petr; Lee, Kim", "Sep 2019", "Stroke", "neuro"],
    ["1003", "10.1/c", "r3", "Glioma survival", "Temozolomide extended survival.",
     "Rossi M", "2018", "Neuro Oncol", "neuro|onco"],
    ["1004", "10.1/d", "r4", "Heart failure", "Beta-blockers reduced admissions.",
     "Chen W", "2021", "Eur Heart J", "cardio"],
]
AUTHOR_LISTS = [["Smith J", "Doe AB"], ["Novak, Petr", "Lee, Kim"], ["Rossi M"], ["Chen W"]]
FIRST_IDS = {"pmid": "1001", "doi": "10.1/a", "id": "r1"}
FIRST_CITATION = {"authors": ["Smith J", "Doe AB"], "year": "2020", "journal": "Lancet"}


def table_file(folder: Path, name: str) -> Path:
    path = folder / name
    if name.endswith(".xlsx"):
        book = Workbook()
        for row in [HEADER, *ROWS]:
            book.active.append(row)
        book.save(path)
    elif name.endswith((".csv", ".tsv")):
        with path.open("w", encoding="utf-8", newline="") as handle:
            csv.writer(handle, delimiter="\t" if name.endswith(".tsv") else ",").writerows(
                [HEADER, *ROWS])
    else:
        records = [dict(zip(HEADER, row, strict=True)) for row in ROWS]
        for record, authors in zip(records, AUTHOR_LISTS, strict=True):
            record["Authors"] = authors  # JSON holds lists as lists
        text = (json.dumps(records) if name.endswith(".json")
                else "".join(json.dumps(r) + "\n" for r in records))
        path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("name", ["rows.csv", "rows.tsv", "rows.xlsx", "rows.json", "rows.jsonl"])
def test_a_table_keeps_its_identifier_and_citation_columns(import_file, tmp_path, name):
    dataset = import_file(table_file(tmp_path, name))
    assert dataset.label_names == ["cardio", "neuro", "onco"]
    rows = sorted(dataset_rows_iter(dataset=dataset), key=lambda r: r["identifiers"]["pmid"])
    assert [r["identifiers"]["pmid"] for r in rows] == ["1001", "1002", "1003", "1004"]
    assert rows[0]["identifiers"] == FIRST_IDS
    assert rows[0]["citation"] == FIRST_CITATION
    assert rows[1]["identifiers"]["doi"] == "10.1/b"
    assert rows[1]["citation"] == {"authors": ["Novak, Petr", "Lee, Kim"], "year": "2019",
                                   "journal": "Stroke"}
    assert rows[0]["record"]["Title"] == "Statins after infarction"
    assert rows[0]["record"]["PMID"] == "1001"
    assert dataset_identifier_kinds(dataset=dataset) == ["pmid", "id", "doi"]


def test_a_ris_library_keeps_ids_dois_pmids_citations_and_each_record(import_file, tmp_path):
    dataset = import_file(write(tmp_path, "library.ris", RIS_LIBRARY), mapping={"unlabelled": 1})
    rows = list(dataset_rows_iter(dataset=dataset))
    assert len(rows) == 3  # the fourth record has no text
    assert rows[0]["identifiers"] == {"doi": "10.1093/eurheartj/ehab001", "id": "smith2021"}
    assert rows[0]["citation"]["journal"] == "European Heart Journal"
    assert rows[0]["record"]["unknown_tag"] == {"XY": ["A tag no reference manager defines"]}
    assert rows[0]["record"]["custom1"] == ["Custom field one", "Custom field one, again"]
    assert rows[0]["record"]["urls"] == ["https://example.org/a", "https://example.org/b"]
    assert rows[1]["identifiers"] == {"pmid": "31234567", "accession": "31234567"}
    assert rows[1]["citation"] == {"authors": ["Rossi, Maria"], "year": "2019",
                                   "journal": "Journal of Neuro-Oncology"}
    assert rows[2]["record"]["type_of_reference"] == "CHAP"


def test_a_pubmed_export_keeps_pmid_doi_authors_year_journal_and_every_field(
    import_file, tmp_path
):
    dataset = import_file(write(tmp_path, "pubmed.nbib", NBIB_PUBMED))
    rows = list(dataset_rows_iter(dataset=dataset))
    assert [r["identifiers"] for r in rows] == [
        {"pmid": "35000001", "doi": "10.1016/j.jacc.2021.11.001"},
        {"pmid": "35000002", "doi": "10.1111/epi.16600"},
        {"pmid": "35000003"},
    ]
    assert rows[0]["citation"] == {"authors": ["Garcia, Elena", "Chen, Wei"], "year": "2022",
                                   "journal": "Journal of the American College of Cardiology"}
    assert rows[2]["citation"] == {"authors": ["Khan A"], "year": "2019",
                                   "journal": "Hepatology"}
    record = rows[0]["record"]
    assert list(record)[:4] == ["PMID", "OWN", "STAT", "DP"]
    assert record["TI"] == ["Statin therapy after acute coronary syndrome and recurrent "
                            "myocardial infarction."]
    assert record["MH"] == ["Myocardial Infarction/*drug therapy",
                            "Hydroxymethylglutaryl-CoA Reductase Inhibitors"]
    # Samples on the dataset page carry the identifiers and, for the page's list of every
    # field of the source (issue 38), the original record of each of the few rows shown.
    sample = dataset_sample_rows(dataset=dataset, n=2)
    assert sample[0]["identifiers"]["pmid"] == "35000001"
    assert sample[0]["record"]["MH"] == record["MH"]


def test_odd_ris_and_medline_lines_are_kept_in_their_field(tmp_path):
    ris = write(tmp_path, "odd.ris", "TY  - JOUR\nTI  - Heart\nXY  - wrapped unknown\n"
                                     "  tag value\nUK  - a tag named UK\nAB  - text\nER  - \n")
    with articles_read(path=ris, filename="odd.ris") as articles:
        record = next(iter(articles)).record
    assert record["unknown_tag"] == {"XY": ["wrapped unknown tag value"],
                                     "UK": ["a tag named UK"]}


def test_a_dataset_stored_before_identifiers_still_reads_and_exports(
    import_file, tmp_path, alice_client
):
    dataset = import_file(table_file(tmp_path, "rows.csv"))  # alice's, like the client
    stored = dataset_rows_file(dataset=dataset)
    table = pq.read_table(stored).drop_columns(["identifiers", "citation", "record"])
    assert table.schema.names == ["row_id", "title", "abstract", "text", "labels", "split"]
    pq.write_table(pa.Table.from_batches(table.to_batches()), stored)

    rows = list(dataset_rows_iter(dataset=dataset))
    assert len(rows) == 4
    assert (rows[0]["identifiers"], rows[0]["record"]) == ({}, None)
    assert dataset_sample_rows(dataset=dataset, n=1)[0]["citation"] == {}
    assert dataset_identifier_kinds(dataset=dataset) == []
    split = dataset_split_examples(dataset=dataset, split="train")
    assert len(split.texts) == dataset.split_sizes["train"]
    for fmt in ("csv", "ris", "jsonl"):
        response = alice_client.get(f"/datasets/{dataset.pk}/export/", {"format": fmt})
        assert response.status_code == 200, fmt
        assert b"Statins after infarction" in b"".join(response.streaming_content)
