"""Decompression is bounded while it streams, not judged by the compressed size: a .xml.gz whose
XML passes DATASET_MAX_DECOMPRESSED_MB, a workbook whose parts would, and any text node past
4 MB (in PubMed XML, gzipped or not, and in a workbook's sheet or shared strings) are refused
with a message naming the limit, and nothing is kept. Ordinary files under the limits import."""

from __future__ import annotations

import gzip
import io
import zipfile

import pytest
from openpyxl import Workbook

from dataset_management.models import Dataset
from dataset_management.readers import DatasetFileError
from tests.decompression_support import (
    EPILOGUE,
    PROLOGUE,
    article_xml,
    articles_xml,
    gzip_bomb,
    pubmed_gz,
)
from tests.plugins.datasets import media_files

pytestmark = pytest.mark.django_db

TEXT_NODE_LIMIT = "past the limit for one text node"


def refused(import_file, path) -> str:
    with pytest.raises(DatasetFileError) as caught:
        import_file(path, filename=path.name)
    assert Dataset.objects.count() == 0
    assert media_files() == set()
    return caught.value.message


def test_a_gzip_past_the_decompressed_limit_is_refused_naming_it(import_file, settings,
                                                                  tmp_path):
    settings.DATASET_MAX_DECOMPRESSED_MB = 1
    path = pubmed_gz(tmp_path / "many.xml.gz", articles=6000)  # about 3 MB of XML, 100 kB packed
    assert path.stat().st_size < 1 << 20
    message = refused(import_file, path)
    assert message == ("The file expands to more than 1 MB when decompressed, the limit "
                       "(DATASET_MAX_DECOMPRESSED_MB); it is refused as a likely decompression "
                       "bomb. Nothing was kept.")


def test_the_same_gzip_under_the_limit_imports(import_file, settings, tmp_path):
    settings.DATASET_MAX_DECOMPRESSED_MB = 4
    dataset = import_file(pubmed_gz(tmp_path / "many.xml.gz", articles=6000))
    assert (dataset.file_format, dataset.row_count) == ("pubmed_xml", 6000)


def test_the_default_limit_is_ten_times_the_upload_cap(settings):
    from medlitbot_project import settings as project_settings

    assert project_settings.DATASET_MAX_DECOMPRESSED_MB == 10 * project_settings.MAX_UPLOAD_SIZE_MB


def test_a_gigabyte_of_spaces_after_twenty_articles_stops_at_the_text_node_limit(
        import_file, tmp_path):
    message = refused(import_file, gzip_bomb(tmp_path / "bomb.xml.gz", articles=20,
                                             spaces_gib=1))
    assert message.startswith("The XML holds a text of more than 4 MB without markup "
                              "(after article 20, at byte ")
    assert message.endswith(f"{TEXT_NODE_LIMIT}: the file is damaged or built to fill memory. "
                            "Nothing was kept.")


def test_an_abstract_of_five_megabytes_in_plain_xml_is_refused_naming_the_limit(
        import_file, tmp_path):
    path = tmp_path / "huge_abstract.xml"
    path.write_bytes(PROLOGUE + article_xml(1) + article_xml(2, abstract="word " * (1 << 20))
                     + EPILOGUE)
    message = refused(import_file, path)
    assert "more than 4 MB without markup (after article 1, at byte " in message
    assert TEXT_NODE_LIMIT in message


def test_an_article_of_many_small_elements_past_eight_megabytes_is_refused(import_file,
                                                                            tmp_path):
    authors = b"<Author><LastName>Doe</LastName><Initials>J</Initials></Author>" * 200_000
    path = tmp_path / "authors.xml.gz"
    path.write_bytes(gzip.compress(
        PROLOGUE + articles_xml(3) + b"<PubmedArticle><MedlineCitation><PMID>9</PMID><Article>"
        b"<AuthorList>" + authors + b"</AuthorList></Article></MedlineCitation></PubmedArticle>"
        + EPILOGUE))
    assert refused(import_file, path) == (
        "Article 4 of the XML is larger than 8 MB, the limit for one article (PubMed's largest "
        "are about 1 MB): the file is damaged or built to fill memory. Nothing was kept.")


def workbook(path, *, rows: int = 2, text: str = "An abstract"):
    book = Workbook()
    sheet = book.active
    sheet.append(["title", "abstract", "label"])
    for i in range(rows):
        sheet.append([f"Title {i}", text, "ab"[i % 2]])
    book.save(path)
    return path


def rewritten(source, path, parts: dict[str, str]):
    """`source` with the named parts replaced or added: what openpyxl cannot write (it cuts
    a cell at Excel's 32,767 characters and writes no shared strings)."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as new:
        for info in old.infolist():
            new.writestr(info.filename, parts.pop(info.filename, None) or old.read(info.filename))
        for name, data in parts.items():
            new.writestr(name, data)
    return path


SHEET = ('<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats'
         '.org/spreadsheetml/2006/main"><sheetData><row r="1">'
         '<c r="A1" t="inlineStr"><is><t>title</t></is></c>'
         '<c r="B1" t="inlineStr"><is><t>abstract</t></is></c></row>'
         '<row r="2"><c r="A2" t="inlineStr"><is><t>T</t></is></c>{cell}</row>'
         "</sheetData></worksheet>")


def test_a_workbook_that_would_expand_past_the_limit_is_refused_naming_it(import_file, settings,
                                                                          tmp_path):
    settings.DATASET_MAX_DECOMPRESSED_MB = 1
    path = workbook(tmp_path / "big.xlsx", rows=40, text="x" * 30_000)  # 1.2 MB of sheet
    assert "(DATASET_MAX_DECOMPRESSED_MB)" in refused(import_file, path)


def test_an_inline_string_of_five_megabytes_in_a_sheet_is_refused_naming_the_limit(
        import_file, tmp_path):
    cell = '<c r="B2" t="inlineStr"><is><t>' + "y" * (5 << 20) + "</t></is></c>"
    path = rewritten(workbook(tmp_path / "source.xlsx"), tmp_path / "inline.xlsx",
                     {"xl/worksheets/sheet1.xml": SHEET.format(cell=cell)})
    assert TEXT_NODE_LIMIT in refused(import_file, path)


def test_shared_strings_past_the_text_node_limit_are_refused_naming_it(import_file, tmp_path):
    source = workbook(tmp_path / "source.xlsx")
    with zipfile.ZipFile(source) as zf:
        types = zf.read("[Content_Types].xml").decode()
        rels = zf.read("xl/_rels/workbook.xml.rels").decode()
    types = types.replace("</Types>", '<Override PartName="/xl/sharedStrings.xml" ContentType='
                          '"application/vnd.openxmlformats-officedocument.spreadsheetml.'
                          'sharedStrings+xml"/></Types>')
    rels = rels.replace("</Relationships>", '<Relationship Id="rIdS" Type="http://schemas.'
                        'openxmlformats.org/officeDocument/2006/relationships/sharedStrings" '
                        'Target="sharedStrings.xml"/></Relationships>')
    strings = ('<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats'
               '.org/spreadsheetml/2006/main" count="1" uniqueCount="1"><si><t>'
               + "z" * (5 << 20) + "</t></si></sst>")
    path = rewritten(source, tmp_path / "shared.xlsx", {
        "[Content_Types].xml": types, "xl/_rels/workbook.xml.rels": rels,
        "xl/sharedStrings.xml": strings,
        "xl/worksheets/sheet1.xml": SHEET.format(cell='<c r="B2" t="s"><v>0</v></c>')})
    assert TEXT_NODE_LIMIT in refused(import_file, path)


def test_an_ordinary_workbook_still_imports(import_file, tmp_path):
    buffer = io.BytesIO()
    book = Workbook()
    sheet = book.active
    sheet.append(["title", "abstract", "label"])
    for i in range(30):
        sheet.append([f"Title {i}", f"Abstract number {i} about the heart", "ab"[i % 2]])
    book.save(buffer)
    path = tmp_path / "ok.xlsx"
    path.write_bytes(buffer.getvalue())
    assert import_file(path).row_count == 30
