"""Every file in the bad-input corpus is refused with its exact reason, and nothing is saved."""

import zipfile

import pytest
from openpyxl import Workbook

from dataset_management.models import Dataset
from dataset_management.readers import DatasetFileError
from tests.plugins.datasets import BAD_INPUTS, media_files

ONLY_ONE_LABEL = (
    "Only one label ('cardiovascular') found: a classifier needs at least two. "
    "Import the file as unlabelled to use it for prediction only."
)
NUL_BYTES = "The file contains NUL bytes: it is binary (or UTF-16), not a text file."
NO_TEXT_COLUMN = (
    "No abstract or text column found (columns: {}); "
    "name one with the abstract or text column option."
)

CORPUS = [
    ("empty.csv", "The file is empty."),
    ("whitespace_only.csv", "The file is empty."),
    ("bom_only.csv", "The file is empty."),
    ("empty.json", "The file is empty."),
    ("header_only.csv", "The file has a header but no data rows."),
    ("binary_garbage.csv", NUL_BYTES),
    ("utf16.csv", NUL_BYTES),
    ("wrong_delimiter.csv", NO_TEXT_COLUMN.format("title:abstract:label")),
    ("title_only.csv", NO_TEXT_COLUMN.format("title, label")),
    ("unbalanced_quotes.csv", "Unbalanced quotes: the quoted field starting on line 3 never ends."),
    ("stray_quote.csv", "Line 2: malformed CSV (',' expected after '\"')."),
    ("duplicate_columns.csv", "Duplicate column name 'abstract' in the header."),
    ("duplicate_columns_case.tsv", "Duplicate column name 'title' in the header."),
    # Decided: a file that is UTF-8 in places and not in others is refused, never half-decoded.
    ("mixed_encodings.csv",
     "Line 3 is not valid UTF-8 but other lines are: the file mixes encodings. "
     "Re-save it as UTF-8."),
    ("cyrillic_cp1251.csv",
     "Line 2 is not valid UTF-8 and the file does not read as Windows-1252 or Latin-1 either. "
     "Re-save it as UTF-8."),
    ("label_all_empty.csv",
     "The label column 'label' is empty in every row; import the file as unlabelled to use it "
     "for prediction only."),
    ("one_class.csv", ONLY_ONE_LABEL),
    ("abstract_all_empty.csv", "The text column 'abstract' is empty in every row."),
    ("bad_split_values.csv", "No usable rows: all 4 were dropped (unknown split value)."),
    ("json_object.json",
     "The JSON file holds a single object where an array of records was expected."),
    ("json_not_objects.json", "Record 1 is not a JSON object."),
    ("json_truncated.json", "The JSON array is not closed: the file ends before ']'."),
    ("json_empty_array.json", "The JSON file has no records."),
    ("json_trailing_garbage.json", "Unexpected data after the end of the JSON array."),
    ("broken_line.jsonl", "Line 3 is not valid JSON (Expecting ',' delimiter)."),
    ("jsonl_non_object.jsonl", "Record 2 is not a JSON object."),
    ("ris_missing_er.ris", "RIS record 2 (line 6) has no ER tag: the file is truncated."),
    ("ris_ty_twice.ris", "RIS record 1 (line 1) has no ER tag before the next TY."),
    ("ris_no_ty.ris", "Line 1 is outside a RIS record (no TY tag)."),
    ("nbib_no_abstracts.nbib", "The text column 'abstract' is empty in every row."),
    ("nbib_garbage.nbib", "Line 1 is not a MEDLINE field (TAG - value)."),
    ("not_really.xlsx", "The file is not a valid XLSX workbook."),
    ("legacy.xls", "Legacy .xls workbooks are not supported: save it as .xlsx or CSV."),
]


def assert_refused(import_file, path, message, **kwargs):
    before = media_files()
    with pytest.raises(DatasetFileError) as caught:
        import_file(path, **kwargs)
    assert caught.value.message == message
    assert Dataset.objects.count() == 0
    assert media_files() == before


@pytest.mark.parametrize(("name", "message"), CORPUS, ids=[name for name, _ in CORPUS])
def test_bad_input_is_refused_with_its_reason(import_file, name, message):
    assert_refused(import_file, BAD_INPUTS / name, message)


def test_corpus_has_at_least_thirty_files():
    files = [p for p in BAD_INPUTS.iterdir() if p.suffix != ".py"]
    assert len(files) >= 30
    assert {p.name for p in files} >= {name for name, _ in CORPUS}


def test_a_field_over_one_megabyte_is_refused(import_file, tmp_path):
    path = tmp_path / "huge_field.csv"
    path.write_text("title,abstract,label\nA," + "x" * (1024 * 1024 + 10) + ",c\n")
    assert_refused(
        import_file, path,
        "Line 2 has a field larger than 1 MB; the file may have an unclosed quote.",
    )


def test_an_xlsx_zip_bomb_is_refused_before_opening(import_file, tmp_path):
    path = tmp_path / "bomb.xlsx"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("xl/workbook.xml", "<workbook/>")
        zf.writestr("xl/worksheets/sheet1.xml", b"0" * (40 * 1024 * 1024))
    assert_refused(
        import_file, path,
        "The XLSX file would expand to 40 MB when unzipped: refusing to open a likely zip bomb.",
    )


def test_a_zip_that_is_not_a_workbook_is_refused(import_file, tmp_path):
    path = tmp_path / "archive.xlsx"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("readme.txt", "hello")
    assert_refused(import_file, path, "The file is a zip archive but not an XLSX workbook.")


def test_a_workbook_with_only_a_header_is_refused(import_file, tmp_path):
    path = tmp_path / "header.xlsx"
    wb = Workbook()
    wb.active.append(["title", "abstract", "label"])
    wb.save(path)
    assert_refused(import_file, path, "The file has a header but no data rows.")


def test_a_file_over_the_upload_limit_is_refused_before_reading(import_file, tmp_path, settings):
    settings.MAX_UPLOAD_SIZE = 1024 * 1024
    path = tmp_path / "big.csv"
    path.write_bytes(b"title,abstract,label\n" + b"A,B,c\n" * 300_000)
    assert_refused(import_file, path, "The file is 1.7 MB; the limit is 1 MB.")


def test_a_mapping_naming_a_missing_column_is_refused(import_file):
    from tests.plugins.datasets import FORMATS

    assert_refused(
        import_file, FORMATS / "comma.csv",
        "Column 'body' not found; the columns are: title, abstract, label.",
        mapping={"abstract_column": "body"},
    )
