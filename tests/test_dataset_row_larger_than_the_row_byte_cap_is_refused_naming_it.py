"""One row (a CSV record, a RIS record) larger than DATASET_MAX_ROW_BYTES is refused, naming
the row, its line, the cap and the setting; it is measured in UTF-8 bytes, not characters, and
nothing is kept. The upload page says so at step 1, from the preview."""

from __future__ import annotations

from pathlib import Path

import pytest

from dataset_management.readers import DatasetFileError
from tests.bad_input_support import assert_nothing_kept, assert_refused, web_upload
from tests.plugins.datasets import media_files

pytestmark = pytest.mark.django_db

CAP = 1000


def csv_text(big_abstract: str, *, at: int = 2) -> str:
    rows = [f"Title {i},Heart study {i},{('a', 'b')[i % 2]}" for i in range(6)]
    rows[at] = f"Title {at},{big_abstract},a"
    return "\n".join(["title,abstract,label", *rows]) + "\n"


def too_large(row: int) -> str:
    return (f"Row {row} (line {row + 1}) is larger than the 1,000 bytes one row may hold "
            "(DATASET_MAX_ROW_BYTES); the file may have an unclosed quote: fix it, or raise "
            "the cap.")


@pytest.fixture
def capped(settings):
    settings.DATASET_MAX_ROW_BYTES = CAP
    return settings


def test_a_row_past_the_cap_is_refused(capped, import_file, tmp_path: Path) -> None:
    path = tmp_path / "big.csv"
    path.write_text(csv_text("x" * CAP))
    assert_refused(import_file, path, too_large(3))


def test_the_cap_counts_bytes_not_characters(capped, import_file, tmp_path: Path) -> None:
    path = tmp_path / "accents.csv"
    path.write_text(csv_text("é" * 600), encoding="utf-8")  # 600 characters, 1,200 bytes
    assert_refused(import_file, path, too_large(3))
    path.write_text(csv_text("é" * 400), encoding="utf-8")  # 800 bytes and the other cells
    assert import_file(path).row_count == 6


def test_a_ris_record_is_measured_once_not_with_its_copy(
    capped, import_file, tmp_path: Path
) -> None:
    # Each record is also kept whole beside its columns; counting both would pass the cap.
    def record(i: int, abstract: str) -> str:
        return f"TY  - JOUR\nTI  - Title {i}\nAB  - {abstract}\nER  - \n"

    path = tmp_path / "refs.ris"
    path.write_text("\n".join(record(i, "y" * 600 if i == 1 else f"Study {i}")
                              for i in range(4)))
    assert import_file(path, mapping={"unlabelled": True}).row_count == 4
    path.write_text("\n".join(record(i, "y" * CAP if i == 1 else f"Study {i}")
                              for i in range(4)))
    before = media_files()
    with pytest.raises(DatasetFileError) as caught:
        import_file(path, filename="other.ris", mapping={"unlabelled": True})
    assert caught.value.message == too_large(2).replace("(line 3)", "(line 6)")
    assert_nothing_kept(before, datasets=1)


def test_the_upload_page_refuses_it_at_step_one(capped, alice_client, media_root) -> None:
    response = web_upload(alice_client, "big.csv", csv_text("x" * CAP).encode())
    assert response.status_code == 400
    assert response.context["read_error"] == too_large(3)
    assert_nothing_kept()


def test_the_default_cap_is_one_mebibyte(settings) -> None:
    assert settings.DATASET_MAX_ROW_BYTES == 1024 * 1024
    assert settings.DATASET_MAX_ROWS == 2_000_000
