"""A file with more rows than DATASET_MAX_ROWS is refused at the first row past the cap, with a
message naming the cap, the setting and the row, on every door (service, upload page, API,
import_dataset); nothing is kept, the staged copy neither. The reader stops there: rows after
the cap that would not parse never reach the parser."""

from __future__ import annotations

from pathlib import Path

import pytest

from dataset_management.preview import PREVIEW_SAMPLE
from dataset_management.readers import DatasetFileError, read_records
from tests.bad_input_support import (
    api_client,
    api_upload,
    assert_nothing_kept,
    assert_refused,
    cli_refusal,
    web_confirm,
    web_upload,
)
from tests.import_support import import_run_last

pytestmark = pytest.mark.django_db

CAP = 100
LABELS = ("cardiology", "oncology")


def csv_text(rows: int, *, broken_tail: bool = False) -> str:
    lines = ["title,abstract,label"]
    lines += [f"Title {i},Heart and tumour study number {i},{LABELS[i % 2]}" for i in range(rows)]
    if broken_tail:  # an unclosed quote: the csv module fails on it (when it gets that far)
        lines += ['T,"never closed,cardiology'] + ["x,y,z"] * 10
    return "\n".join(lines) + "\n"


def over_cap(cap: int = CAP) -> str:
    return (f"This file has more than {cap:,} rows (DATASET_MAX_ROWS); split it or raise the "
            f"cap. Reading stopped at row {cap + 1:,} (line {cap + 2:,}).")


@pytest.fixture
def capped(settings):
    settings.DATASET_MAX_ROWS = CAP
    return settings


def test_a_file_at_the_cap_imports(capped, import_file, tmp_path: Path) -> None:
    path = tmp_path / "at_cap.csv"
    path.write_text(csv_text(CAP))
    assert import_file(path).row_count == CAP


def test_the_service_refuses_one_row_past_the_cap(capped, import_file, tmp_path: Path) -> None:
    path = tmp_path / "over.csv"
    path.write_text(csv_text(CAP + 1))
    assert_refused(import_file, path, over_cap())


def test_the_reader_stops_at_the_cap_not_at_the_broken_rows_after_it(
    capped, import_file, tmp_path: Path
) -> None:
    path = tmp_path / "broken_after_cap.csv"
    path.write_text(csv_text(CAP + 5, broken_tail=True))
    assert_refused(import_file, path, over_cap())
    # Without the cap the same file fails on its unclosed quote: the cap stopped reading first.
    with (read_records(path, filename=path.name) as stream,
          pytest.raises(DatasetFileError) as caught):
        list(stream.records)
    assert "Unbalanced quotes" in str(caught.value)


def test_other_formats_name_their_position(capped, import_file, tmp_path: Path) -> None:
    path = tmp_path / "over.jsonl"
    path.write_text("\n".join(
        f'{{"title": "T{i}", "abstract": "Study {i}", "label": "{LABELS[i % 2]}"}}'
        for i in range(CAP + 1)))
    assert_refused(import_file, path, over_cap().replace(f"(line {CAP + 2:,})",
                                                         f"(line {CAP + 1:,})"))


def test_the_upload_page_refuses_at_step_one_when_the_preview_passes_the_cap(
    capped, alice_client, media_root
) -> None:
    response = web_upload(alice_client, "over.csv", csv_text(CAP + 1).encode())
    assert response.status_code == 400
    assert response.context["read_error"] == over_cap()
    assert_nothing_kept()


def test_the_upload_page_queues_a_file_whose_first_rows_pass_and_its_import_fails_on_the_cap(
    settings, alice_client, media_root
) -> None:
    # A cap the preview's sample stays within, so only the worker's import reads past it.
    settings.DATASET_MAX_ROWS = PREVIEW_SAMPLE
    response = web_upload(alice_client, "over.csv", csv_text(PREVIEW_SAMPLE + 50).encode())
    assert response.status_code == 200, response.context.get("read_error")
    response = web_confirm(alice_client, response.context["staging"].token)
    assert response.status_code == 302
    job = import_run_last()  # what the worker's task runs
    assert (job.status, job.reason) == ("failed", over_cap(PREVIEW_SAMPLE))
    page = alice_client.get(response["Location"]).content.decode()
    assert over_cap(PREVIEW_SAMPLE) in page
    assert_nothing_kept()  # the staged copy and the import's input neither


def test_the_api_answers_400_with_the_reason(capped, api_token, media_root) -> None:
    response = api_upload(api_client(api_token), "over.csv", csv_text(CAP + 1).encode())
    assert response.status_code == 400
    assert response.json() == {"file": [over_cap()]}
    assert_nothing_kept()


def test_the_cli_fails_in_one_line(capped, user, media_root, tmp_path: Path) -> None:
    path = tmp_path / "over.csv"
    path.write_text(csv_text(CAP + 1))
    assert cli_refusal(path, user) == over_cap()
    assert_nothing_kept()


def test_a_cap_of_zero_is_off(settings, import_file, tmp_path: Path) -> None:
    settings.DATASET_MAX_ROWS = 0
    path = tmp_path / "many.csv"
    path.write_text(csv_text(CAP + 1))
    assert import_file(path).row_count == CAP + 1
