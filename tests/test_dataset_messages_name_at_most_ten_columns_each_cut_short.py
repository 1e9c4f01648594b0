"""A message that lists names from the file (columns, options, labels) shows the first ten and
"and N more", each name cut to 60 characters: a CSV of 200,000 columns answered a 400 of 1.7 MB.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from classification.batches.services import batch_job_run
from dataset_management.readers.errors import NAME_CHARS, name_shown, names_listed
from dataset_management.validation import report_lines
from tests.bad_input_support import (
    api_client,
    api_upload,
    assert_nothing_kept,
    assert_refused,
    cli_refusal,
    web_upload,
)
from tests.batch_support import create_batch
from tests.plugins.datasets import FORMATS

pytestmark = pytest.mark.django_db

WIDTH = 200_000
FIRST_TEN = "c0, c1, c2, c3, c4, c5, c6, c7, c8, c9 and 199,990 more"
NO_TEXT = (f"No abstract or text column found (columns: {FIRST_TEN}); name one with the "
           "abstract or text column option.")


@pytest.fixture
def wide_csv(tmp_path: Path) -> Path:
    path = tmp_path / "wide.csv"
    path.write_text(",".join(f"c{i}" for i in range(WIDTH)) + "\n"
                    + ",".join("x" for _ in range(WIDTH)) + "\n")
    return path


def test_the_helper_lists_ten_and_counts_the_rest() -> None:
    assert names_listed(["a", "b"]) == "a, b"
    assert names_listed([f"n{i}" for i in range(10)]) == "n0, n1, n2, n3, n4, n5, n6, n7, n8, n9"
    assert names_listed([f"n{i}" for i in range(12)]).endswith("n9 and 2 more")
    assert name_shown("x" * NAME_CHARS) == "x" * NAME_CHARS
    assert name_shown("x" * 10_000) == "x" * (NAME_CHARS - 1) + "…"


def test_the_service_names_ten_columns(import_file, wide_csv: Path) -> None:
    assert_refused(import_file, wide_csv, NO_TEXT)


def test_a_missing_override_names_ten_columns_and_itself_cut_short(import_file,
                                                                   wide_csv: Path) -> None:
    assert_refused(import_file, wide_csv,
                   f"Column '{'b' * 59}…' not found; the columns are: {FIRST_TEN}.",
                   mapping={"abstract_column": "b" * 5000})


def test_a_long_duplicate_column_name_is_cut_short(import_file, tmp_path: Path) -> None:
    path = tmp_path / "dup.csv"
    long = "abstract " * 2000
    path.write_text(f"title,{long},{long}\nA,B,C\n")
    assert_refused(import_file, path,
                   f"Duplicate column name '{long.strip()[:59]}…' in the header.")


def test_the_web_upload_says_it_in_a_line(alice_client, media_root, wide_csv: Path) -> None:
    response = web_upload(alice_client, "wide.csv", wide_csv.read_bytes())
    assert response.status_code == 400
    assert response.context["read_error"] == NO_TEXT
    assert_nothing_kept()


def test_the_api_answers_a_short_400(api_token, media_root, wide_csv: Path) -> None:
    response = api_upload(api_client(api_token), "wide.csv", wide_csv.read_bytes())
    assert response.status_code == 400
    assert response.json() == {"file": [NO_TEXT]}
    assert len(response.content) < 300
    assert_nothing_kept()


def test_unknown_mapping_options_are_listed_ten_at_most(api_token, media_root) -> None:
    mapping = {f"opt{i:03}": "x" for i in range(500)}
    with (FORMATS / "comma.csv").open("rb") as handle:
        response = api_client(api_token).post("/api/datasets/", {
            "file": handle, "mapping": json.dumps(mapping),
        }, format="multipart")
    assert response.status_code == 400
    [error] = response.json()["mapping"]
    assert error.startswith("Unknown option(s): opt000, opt001, opt002, opt003, opt004, opt005, "
                            "opt006, opt007, opt008, opt009 and 490 more. Known: ")
    assert_nothing_kept()


def test_the_cli_fails_in_one_short_line(user, media_root, wide_csv: Path) -> None:
    assert cli_refusal(wide_csv, user) == NO_TEXT
    assert_nothing_kept()


def test_a_batch_of_it_fails_with_the_short_reason(user, media_root, trained_model,
                                                   wide_csv: Path) -> None:
    batch = create_batch(owner=user, ml_model=trained_model, path=wide_csv)
    assert batch_job_run(batch_id=batch.pk.hex) == "failed"
    batch.refresh_from_db()
    assert batch.reason == f"Could not read that file: {NO_TEXT}"


def test_the_printed_report_lists_ten_columns() -> None:
    report = {"columns": [f"c{i}" for i in range(WIDTH)], "rows_read": 1, "rows_kept": 1,
              "rows_dropped": 0}
    assert f"Columns: {FIRST_TEN}" in report_lines(report)
