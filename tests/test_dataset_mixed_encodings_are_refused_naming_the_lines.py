"""A file mixing UTF-8 and Latin-1 (Windows-1252) rows is refused, never read as Latin-1 into
mojibake: the message names the lines that are not UTF-8 (the first ten and how many more) and,
where those are most of the file, the UTF-8 lines too. Nothing is saved."""

import pytest
from django.core.management import CommandError, call_command

from dataset_management.models import Dataset
from dataset_management.readers import DatasetFileError

HEADER = b"title,abstract,label\n"


def utf8_row(i):
    return f"Café {i},Naïve patients in Zürich,cardiovascular\n".encode()


def latin1_row(i):
    return f"Résumé {i},Patients à Genève,oncological\n".encode("latin-1")


def ascii_row(i):
    return f"Plain {i},Plain abstract text,neurological\n".encode()


def refusal(import_file, path):
    with pytest.raises(DatasetFileError) as caught:
        import_file(path)
    assert Dataset.objects.count() == 0
    return caught.value.message


def test_every_latin1_line_among_utf8_lines_is_named(import_file, tmp_path):
    # Lines: 1 header, 2 UTF-8, 3 ASCII, 4 Latin-1, 5 UTF-8, 6 Latin-1, 7 ASCII, 8 Latin-1.
    rows = [utf8_row(1), ascii_row(2), latin1_row(3), utf8_row(4), latin1_row(5), ascii_row(6),
            latin1_row(7), utf8_row(8), utf8_row(9)]
    path = tmp_path / "mixed.csv"
    path.write_bytes(HEADER + b"".join(rows))
    assert refusal(import_file, path) == (
        "Lines 4, 6, 8 are not valid UTF-8 but other lines are: the file mixes encodings. "
        "Re-save it as UTF-8."
    )


def test_mostly_latin1_names_the_few_utf8_lines_as_well(import_file, tmp_path):
    rows = [latin1_row(i) for i in range(30)]
    rows[19] = utf8_row(19)  # line 21
    path = tmp_path / "mostly_latin1.csv"
    path.write_bytes(HEADER + b"".join(rows))
    message = refusal(import_file, path)
    assert message.startswith(
        "Lines 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 and 19 more are not valid UTF-8 but other lines "
        "are (UTF-8 with accents: line 21): the file mixes encodings."
    )


def test_a_latin1_line_after_a_utf8_byte_order_mark_is_named(import_file, tmp_path):
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbf" + HEADER + ascii_row(1) + latin1_row(2) + ascii_row(3))
    assert refusal(import_file, path).startswith("Line 3 is not valid UTF-8 but other lines are")


def test_a_latin1_line_past_the_first_megabyte_is_found(import_file, tmp_path):
    rows = [utf8_row(i) for i in range(30_000)] + [latin1_row(0)]
    path = tmp_path / "late.csv"
    path.write_bytes(HEADER + b"".join(rows))
    assert refusal(import_file, path).startswith(
        "Line 30002 is not valid UTF-8 but other lines are")


def test_import_dataset_names_the_lines_in_one_line(tmp_path, media_root, user):
    path = tmp_path / "mixed.csv"
    path.write_bytes(HEADER + utf8_row(1) + latin1_row(2) + latin1_row(3))
    with pytest.raises(CommandError, match=r"^Lines 3, 4 are not valid UTF-8"):
        call_command("import_dataset", str(path), "--name", "X", "--owner", "alice")


def test_a_wholly_latin1_file_is_still_decoded(import_file, tmp_path):
    path = tmp_path / "latin1.csv"
    path.write_bytes(HEADER + b"".join(latin1_row(i) for i in range(4))
                     + b"".join(ascii_row(i) for i in range(4)))
    dataset = import_file(path, mapping={"unlabelled": True})
    assert dataset.encoding in ("cp1252", "latin_1", "windows-1252", "iso8859_1")
