"""A workbook's shared strings stay on disk while it is read, so memory is bounded whatever the
file holds; past the limits that bound it (distinct texts, rows, parts read whole) a workbook is
refused with the reason, on every door, keeping nothing."""

from __future__ import annotations

import random
import tracemalloc
import zipfile
from pathlib import Path
from xml.sax.saxutils import escape

import pytest
from openpyxl import Workbook
from openpyxl.cell.rich_text import CellRichText, TextBlock
from openpyxl.cell.text import InlineFont

from dataset_management.readers import read_records, xlsx, xlsx_strings
from tests.bad_input_support import (
    api_client,
    api_upload,
    assert_nothing_kept,
    assert_refused,
    cli_refusal,
    web_upload,
)

pytestmark = pytest.mark.django_db

NS = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
LABELS = ("cardiology", "oncology")


def workbook(path: Path, rows: list[list[str]], *, strings: list[str] | None = None,
             styles: bytes | None = None) -> Path:
    """An XLSX written by hand (fast at any size): every cell a shared string.

    `strings` replaces the <si> items (raw XML) to test what Excel writes beyond plain text.
    """
    index: dict[str, int] = {}
    cells = [[index.setdefault(v, len(index)) for v in row] for row in rows]
    items = strings or [f"<si><t>{escape(v)}</t></si>" for v in index]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("[Content_Types].xml", (
            '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package'
            '.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
            '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-'
            'officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/'
            'sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.'
            'spreadsheetml.sharedStrings+xml"/></Types>'))
        zf.writestr("_rels/.rels", (
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
            f'relationships"><Relationship Id="rId1" Type="{REL}/officeDocument" '
            'Target="xl/workbook.xml"/></Relationships>'))
        zf.writestr("xl/workbook.xml", (
            f'<workbook {NS} xmlns:r="{REL}"><sheets><sheet name="Articles" sheetId="1" '
            'r:id="rId1"/></sheets></workbook>'))
        zf.writestr("xl/_rels/workbook.xml.rels", (
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
            f'relationships"><Relationship Id="rId1" Type="{REL}/worksheet" '
            f'Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="{REL}/'
            'sharedStrings" Target="sharedStrings.xml"/></Relationships>'))
        zf.writestr("xl/sharedStrings.xml", f"<sst {NS}>{''.join(items)}</sst>")
        zf.writestr("xl/worksheets/sheet1.xml", f"<worksheet {NS}><sheetData>" + "".join(
            f'<row r="{r}">' + "".join(f'<c t="s"><v>{i}</v></c>' for i in row) + "</row>"
            for r, row in enumerate(cells, start=1)) + "</sheetData></worksheet>")
        if styles is not None:
            zf.writestr("xl/styles.xml", styles)
    return path


def articles(n: int, words: int = 8) -> list[list[str]]:
    rng = random.Random(n)
    vocab = [f"w{i}" for i in range(3000)]
    return [["title", "abstract", "label"]] + [
        [f"Study {i}", " ".join(rng.choices(vocab, k=words)), LABELS[i % 2]] for i in range(n)
    ]


def read_all(path: Path) -> list[dict]:
    with read_records(path, filename=path.name) as stream:
        return [record for _, record in stream.records]


def test_texts_read_back_as_openpyxl_reads_them(tmp_path: Path) -> None:
    wb = Workbook()
    sheet = wb.active
    sheet.append(["title", "abstract", "label"])
    rich = CellRichText("Heart ", TextBlock(InlineFont(b=True), "failure"), " outcomes")
    sheet.append(["Formatted", rich, "cardiology"])
    sheet.append(["  spaced  ", "Line one\nline two", "oncology"])
    path = tmp_path / "openpyxl.xlsx"
    wb.save(path)
    assert read_all(path) == [
        {"title": "Formatted", "abstract": "Heart failure outcomes", "label": "cardiology"},
        {"title": "spaced", "abstract": "Line one\nline two", "label": "oncology"},
    ]

    strings = [
        "<si><t>title</t></si>", "<si><t>abstract</t></si>", "<si><t>label</t></si>",
        # Phonetic hints (rPh) are not part of the text; _x005F_ escapes a literal "_x".
        '<si><t>Kanji</t><rPh sb="0" eb="1"><t>kana</t></rPh></si>',
        "<si><r><t>A &amp; </t></r><r><rPr><b/></rPr><t>B</t></r></si>",
        "<si><t>a_x005F_x000D_b</t></si>",
    ]
    path = workbook(tmp_path / "excel.xlsx", [["title", "abstract", "label"],
                                              ["Kanji", "A & B", "x"]], strings=strings)
    assert read_all(path) == [{"title": "Kanji", "abstract": "A & B", "label": "a_x000D_b"}]


def test_the_shared_strings_are_not_held_in_memory(tmp_path: Path) -> None:
    path = workbook(tmp_path / "big.xlsx", articles(1500, words=800))
    with zipfile.ZipFile(path) as zf:
        strings_bytes = zf.getinfo("xl/sharedStrings.xml").file_size
    assert strings_bytes > 6 * 2**20
    tracemalloc.start()
    try:
        with read_records(path, filename=path.name) as stream:
            count = sum(1 for _ in stream.records)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 1500
    # openpyxl's own table held every string: 7.3 MB here. Read from disk: about 1 MB (zip and
    # XML buffers, the offsets, the cached labels, openpyxl's ~100 bytes a row).
    assert peak < strings_bytes / 4, f"peak {peak / 2**20:.1f} MB"


def test_more_distinct_texts_than_the_budget_are_refused(import_file, tmp_path: Path,
                                                         monkeypatch) -> None:
    monkeypatch.setattr(xlsx_strings, "MAX_SHARED_STRINGS", 10)
    path = workbook(tmp_path / "many.xlsx", articles(20))
    assert_refused(import_file, path, "The workbook holds more than 10 distinct texts; save it "
                                      "as CSV and upload that instead.")


def test_a_sheet_past_the_row_limit_is_refused(import_file, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(xlsx, "MAX_ROWS", 5)
    path = workbook(tmp_path / "rows.xlsx", articles(10))
    assert_refused(import_file, path,
                   "The sheet goes on past row 5, more than Excel allows: the file is damaged.")


def test_a_part_read_whole_past_its_limit_is_refused(import_file, tmp_path: Path,
                                                     monkeypatch) -> None:
    monkeypatch.setattr(xlsx, "MAX_WHOLE_PART_BYTES", 2**20)
    styles = f"<styleSheet {NS}><!-- {'x' * (2 * 2**20)} --></styleSheet>".encode()
    path = workbook(tmp_path / "styles.xlsx", articles(10), styles=styles)
    assert_refused(import_file, path, "The workbook's part xl/styles.xml is 2 MB unzipped; the "
                                      "limit is 1 MB. Save the sheet as CSV and upload that "
                                      "instead.")


def test_a_doctype_in_the_shared_strings_is_refused(import_file, tmp_path: Path) -> None:
    strings = ['<!DOCTYPE sst [<!ENTITY a "aaaa">]><si><t>&a;</t></si>']
    path = workbook(tmp_path / "dtd.xlsx", [["x"]], strings=strings)
    assert_refused(import_file, path, "The file is not a valid XLSX workbook.")


@pytest.fixture
def over_budget(tmp_path: Path, monkeypatch) -> tuple[bytes, str]:
    monkeypatch.setattr(xlsx_strings, "MAX_SHARED_STRINGS", 10)
    path = workbook(tmp_path / "many.xlsx", articles(20))
    return path.read_bytes(), ("The workbook holds more than 10 distinct texts; save it as CSV "
                               "and upload that instead.")


def test_the_web_upload_says_why_and_keeps_nothing(alice_client, media_root,
                                                   over_budget) -> None:
    content, message = over_budget
    response = web_upload(alice_client, "many.xlsx", content)
    assert response.status_code == 400
    assert response.context["read_error"] == message
    assert_nothing_kept()


def test_the_api_answers_400(api_token, media_root, over_budget) -> None:
    content, message = over_budget
    response = api_upload(api_client(api_token), "many.xlsx", content)
    assert response.status_code == 400
    assert response.json() == {"file": [message]}
    assert_nothing_kept()


def test_the_cli_fails_in_one_line(user, media_root, tmp_path: Path, over_budget) -> None:
    content, message = over_budget
    path = tmp_path / "cli.xlsx"
    path.write_bytes(content)
    assert cli_refusal(path, user) == message
    assert_nothing_kept()
