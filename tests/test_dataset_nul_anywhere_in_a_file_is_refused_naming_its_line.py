"""A NUL anywhere in a file is refused with the line or record that holds it, so none reaches
the database: on SQLite it became part of label names, on PostgreSQL a 500 DataError. Run this
file on both backends. A NUL in the first 8 KB keeps its own message (the corpus's utf16.csv)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dataset_management.readers.base import NUL_REASON
from tests.bad_input_support import (
    api_client,
    api_upload,
    assert_nothing_kept,
    assert_refused,
    cli_refusal,
    web_upload,
)

pytestmark = pytest.mark.django_db

NUL_LINE = ("Line {} contains a NUL byte, which no text file holds: the file is damaged or "
            "binary. Remove it and upload again.")
LABELS = ("cardiology", "oncology", "neurology")


def csv_with_nul(rows: int, nul_row: int) -> bytes:
    """`rows` articles after the header; data row `nul_row` (1-based) has a NUL in its label."""
    lines = [b"title,abstract,label"]
    for i in range(1, rows + 1):
        label = LABELS[i % 3].encode()
        if i == nul_row:
            label = b"cardio\x00logy"
        lines.append(b"Study %d,Outcomes of patients in cohort %d,%s" % (i, i, label))
    return b"\n".join(lines) + b"\n"


def records(nul_record: int, field: str = "label") -> list[dict[str, str]]:
    out = [{"title": f"Study {i}", "abstract": f"Outcomes in cohort {i}", "label": LABELS[i % 3]}
           for i in range(1, 7)]
    out[nul_record - 1][field] = "cardio\u0000logy"
    return out


CASES = {
    # Past the 8 KB that the first check reads: this one got through before.
    "after_8kb.csv": (csv_with_nul(400, 300), NUL_LINE.format(301)),
    # Past the first 1 MB chunk too, so the line count runs across chunks.
    "after_1mb.csv": (csv_with_nul(30_000, 25_000), NUL_LINE.format(25_001)),
    # JSON writes it as an escape, which no byte check sees.
    "escaped.json": (json.dumps(records(2)).encode(), f"Record 2 {NUL_REASON}"),
    "escaped.jsonl": ("\n".join(json.dumps(r) for r in records(5, "title")).encode(),
                      f"Record 5 {NUL_REASON}"),
    "escaped_key.json": (b'[{"title": "A", "abs\\u0000tract": "B", "label": "c"}]',
                         f"Column 2 of the header {NUL_REASON}"),
}


@pytest.mark.parametrize("name", CASES)
def test_the_service_refuses_it(import_file, tmp_path: Path, name: str) -> None:
    content, message = CASES[name]
    path = tmp_path / name
    path.write_bytes(content)
    assert_refused(import_file, path, message)


def test_the_web_upload_says_which_line_and_keeps_no_staged_copy(alice_client,
                                                                 media_root) -> None:
    content, message = CASES["after_8kb.csv"]
    response = web_upload(alice_client, "after_8kb.csv", content)
    assert response.status_code == 400
    assert response.context["read_error"] == message
    assert_nothing_kept()


@pytest.mark.parametrize("name", ["after_8kb.csv", "escaped.json"])
def test_the_api_answers_400_with_the_reason(api_token, media_root, name: str) -> None:
    content, message = CASES[name]
    response = api_upload(api_client(api_token), name, content)
    assert response.status_code == 400
    assert response.json() == {"file": [message]}
    assert_nothing_kept()


def test_the_cli_fails_in_one_line(user, media_root, tmp_path: Path) -> None:
    content, message = CASES["after_1mb.csv"]
    path = tmp_path / "after_1mb.csv"
    path.write_bytes(content)
    assert cli_refusal(path, user) == message
    assert_nothing_kept()


def test_the_same_file_without_the_nul_imports(import_file, tmp_path: Path) -> None:
    path = tmp_path / "clean.csv"
    path.write_bytes(csv_with_nul(400, 0))
    dataset = import_file(path)
    assert dataset.row_count == 400
    assert dataset.label_names == sorted(LABELS)
