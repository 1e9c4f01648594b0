"""JSON nested past 32 levels is refused with the record's number, never a 500 RecursionError,
on the web upload, the API, the CLI and in a batch; nothing is kept, the staged copy neither."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from classification.batches.services import batch_job_run
from classification.models import BatchJob
from dataset_management.readers.json_reader import MAX_NESTING
from tests.bad_input_support import (
    api_client,
    api_upload,
    assert_nothing_kept,
    assert_refused,
    cli_refusal,
    web_upload,
)
from tests.batch_support import create_batch

pytestmark = pytest.mark.django_db

# Far past the C decoder's stack: these gave a RecursionError (a 500) before.
ABYSS = 100_000


def nested(depth: int) -> str:
    return '{"a": ' * depth + "1" + "}" * depth


def rows(*extra: str) -> list[str]:
    plain = [json.dumps({"title": f"T{i}", "abstract": f"Heart study {i}", "label": "a"})
             for i in range(3)]
    return plain + list(extra)


def message(record: int) -> str:
    return (f"Record {record} is nested more than {MAX_NESTING} levels deep; a record must be "
            "an object of plain fields.")


def array(*records: str) -> str:
    return "[" + ",".join(records) + "]"


def with_abstract(value: str) -> str:
    return '{"title": "T", "abstract": ' + value + ', "label": "a"}'


CASES = {
    # A field holding an object nested far too deep, in the third record of an array.
    "array_field.json": (array(*rows()[:2], with_abstract(nested(ABYSS))), 3),
    # Deep enough to be refused, shallow enough for json to decode: the limit, not the stack.
    "array_just_too_deep.json": (array(*rows()[:1], with_abstract(nested(MAX_NESTING))), 2),
    # The whole file one array of arrays.
    "top_level.json": ("[" * ABYSS + "]" * ABYSS, 1),
    # One object, saved as .json: read as a line, refused naming it.
    "single_object.json": (nested(ABYSS), 1),
    "lines.jsonl": ("\n".join(rows(nested(ABYSS))), 4),
}


@pytest.mark.parametrize("name", CASES)
def test_the_service_refuses_the_record(import_file, tmp_path: Path, name: str) -> None:
    text, record = CASES[name]
    path = tmp_path / name
    path.write_text(text)
    assert_refused(import_file, path, message(record))


def test_a_record_at_the_limit_is_read(import_file, tmp_path: Path) -> None:
    # The record is level 1, so a field may hold MAX_NESTING - 1 levels of objects.
    at_limit = '{"a": ' * (MAX_NESTING - 1) + "1" + "}" * (MAX_NESTING - 1)
    path = tmp_path / "ok.jsonl"
    path.write_text("\n".join(rows(
        '{"title": "T", "abstract": "Brain", "label": "b", "extra": ' + at_limit + "}")))
    assert import_file(path).row_count == 4


@pytest.mark.parametrize("name", ["top_level.json", "lines.jsonl"])
def test_the_web_upload_says_why_and_drops_the_staged_copy(alice_client, media_root,
                                                         name: str) -> None:
    text, record = CASES[name]
    response = web_upload(alice_client, name, text.encode())
    assert response.status_code == 400
    assert response.context["read_error"] == message(record)
    assert_nothing_kept()


@pytest.mark.parametrize("name", ["array_field.json", "lines.jsonl"])
def test_the_api_answers_400_with_the_reason(api_token, media_root, name: str) -> None:
    text, record = CASES[name]
    response = api_upload(api_client(api_token), name, text.encode())
    assert response.status_code == 400
    assert response.json() == {"file": [message(record)]}
    assert_nothing_kept()


def test_the_cli_fails_in_one_line(user, media_root, tmp_path: Path) -> None:
    text, record = CASES["top_level.json"]
    path = tmp_path / "top_level.json"
    path.write_text(text)
    assert cli_refusal(path, user) == message(record)
    assert_nothing_kept()


def test_a_batch_of_it_fails_with_the_reason_and_keeps_no_file(
    user, media_root, trained_model, tmp_path: Path
) -> None:
    text, record = CASES["lines.jsonl"]
    path = tmp_path / "articles.jsonl"
    path.write_text(text)
    batch = create_batch(owner=user, ml_model=trained_model, path=path)
    assert batch_job_run(batch_id=batch.pk.hex) == "failed"
    batch.refresh_from_db()
    assert batch.status == BatchJob.Status.FAILED
    assert batch.reason == f"Could not read that file: {message(record)}"
    assert not [p for p in (media_root / "batches").rglob("*") if p.is_file()]
