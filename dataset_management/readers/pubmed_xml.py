"""PubMed XML (`PubmedArticleSet`): efetch's output and the annual baseline and update files,
as .xml or .xml.gz (told by content: gzip's magic number, not the name).

Streamed: ElementTree's C parser (iterparse) hands over one PubmedArticle at a time, which is
read into a flat dict and then cleared and removed from the root, so memory stays flat on a
1 GB file. defusedxml is not used: it swaps in ElementTree's pure-Python parser for the whole
file (its bare parse ran at 0.7-0.9x ElementTree's in scripts/benchmark_pubmed_xml.py), and a
dependency more. Instead the prologue, the only place a DTD can declare entities, is first
read by an expat parser that refuses an internal DTD subset and any entity declaration
(`_PrologueGuard`); PubMed's own DOCTYPE names an external DTD, which expat never fetches, so
an undeclared entity in the body is a parse error ("undefined entity"), never a fetch.

`pubmed_articles(stream)` is the parser other code uses (saved searches read efetch pages with
it); `read_pubmed_xml(path)` wraps it as a reader's RecordStream.
"""

from __future__ import annotations

import gzip
import re
import xml.etree.ElementTree as ET
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO
from xml.parsers import expat

from .base import Record, RecordStream, check_field
from .bounded import BoundedReader, max_decompressed_bytes
from .errors import DatasetFileError, name_shown

COLUMNS = ["pmid", "doi", "pmcid", "title", "abstract", "journal", "year", "authors", "mesh",
           "publication_types", "keywords"]
GZIP_MAGIC = b"\x1f\x8b"
ROOT = "PubmedArticleSet"
ARTICLE_TAGS = ("PubmedArticle", "PubmedBookArticle")
# The prologue (XML declaration, comments, DOCTYPE) before the root: PubMed's is under 300
# bytes; one far longer is not PubMed's.
MAX_PROLOGUE_BYTES = 1 << 20
READ_CHUNK = 1 << 16
# One article (or any other child of the root) is refused past this, before it is whole: its
# elements take several times their bytes in memory. PubMed's largest (thousands of authors)
# are about 1 MB.
MAX_RECORD_BYTES = 8 << 20
_YEAR = re.compile(r"\b(1[5-9]\d\d|2[01]\d\d)\b")
_SPACES = re.compile(r"\s+")
DTD_REFUSED = ("The XML file declares its own entities or an internal DTD, which PubMed XML "
               "never does; it is refused (entities can expand a small file into gigabytes).")


def pubmed_articles(stream: BinaryIO, *, max_bytes: int | None = None
                    ) -> Iterator[dict[str, Any]]:
    """One dict per article of a PubmedArticleSet read from `stream` (uncompressed bytes):
    pmid, doi, pmcid, title, abstract (a structured abstract as "BACKGROUND: ... METHODS: ..."),
    journal, year (str, "" if none), and the lists authors ("Last FM"), mesh (descriptor names),
    publication_types, keywords. A PubmedBookArticle gives the same keys (its book's title as
    journal). DatasetFileError for a file that is not PubMed XML, is malformed (naming the line)
    or declares entities; the articles before the fault have been yielded by then.

    Memory stays bounded whatever the bytes (bounded.py): the XML stops at `max_bytes` (a
    decompressed file's DATASET_MAX_DECOMPRESSED_MB), one text node at MAX_TEXT_NODE_BYTES, and
    one article (or any other child of the root) at MAX_RECORD_BYTES."""
    bounded = BoundedReader(stream, max_bytes=max_bytes)
    try:
        yield from _articles(bounded)
    except ET.ParseError as error:
        line, column = error.position
        raise DatasetFileError(
            f"The PubMed XML is malformed at line {line:,}, column {column + 1}: "
            f"{_parse_reason(error)}."
        ) from None
    except EOFError:
        raise DatasetFileError("The .xml.gz file is truncated (it ends mid-stream).") from None
    except (gzip.BadGzipFile, zlib.error) as error:
        raise DatasetFileError(f"The .xml.gz file is damaged: {error}.") from None


def _articles(bounded: BoundedReader) -> Iterator[dict[str, Any]]:
    root: ET.Element | None = None
    depth = top_start = articles = 0
    for event, elem in ET.iterparse(_PrologueGuard(bounded), events=("start", "end")):
        if root is None:
            root, depth = elem, 1
            _root_check(elem)
            continue
        depth += 1 if event == "start" else -1
        if event == "start" and depth == 2:
            top_start = bounded.count
        elif depth >= 2 and bounded.count - top_start > MAX_RECORD_BYTES:
            raise DatasetFileError(record_over_limit_message(articles + 1))
        if event == "start" or depth > 1:
            continue
        if elem.tag in ARTICLE_TAGS:
            articles += 1
            bounded.where = f"after article {articles:,}"
            yield article_fields(elem)
        # Every child of the root is cleared and dropped once read (an article once yielded,
        # anything else at once): the tree never holds more than one.
        elem.clear()
        root.clear()
    if root is None:
        raise DatasetFileError("The file holds no XML element.")


def record_over_limit_message(number: int) -> str:
    return (f"Article {number:,} of the XML is larger than {MAX_RECORD_BYTES // 2**20} MB, the "
            "limit for one article (PubMed's largest are about 1 MB): the file is damaged or "
            "built to fill memory. Nothing was kept.")


def _root_check(root: ET.Element) -> None:
    if root.tag == ROOT:
        return
    if root.tag == "eFetchResult":  # efetch's answer to a bad request, <ERROR> inside
        raise DatasetFileError("The file is an E-utilities error answer (eFetchResult), not "
                               "articles: check the query, or fetch it again.")
    raise DatasetFileError(f"The XML file's root is <{name_shown(root.tag)}>, not <{ROOT}>: "
                           "it is not PubMed XML.")


def _parse_reason(error: ET.ParseError) -> str:
    text = str(error).split(":", 1)[0]
    return text or "not well-formed"


class _PrologueGuard:
    """A read()-able view of `stream` that has expat check the bytes before the root element
    for an internal DTD subset or entity declarations, before the real parser sees them."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.seen = 0
        self.done = False
        self.parser = expat.ParserCreate()
        self.parser.StartDoctypeDeclHandler = self._doctype
        self.parser.EntityDeclHandler = self._refuse
        self.parser.UnparsedEntityDeclHandler = self._refuse
        self.parser.ExternalEntityRefHandler = self._refuse
        self.parser.StartElementHandler = self._root_reached

    def read(self, size: int = READ_CHUNK) -> bytes:
        data = self.stream.read(size)
        if not self.done and data:
            self.seen += len(data)
            try:
                self.parser.Parse(data, False)
            except _RootReached:
                self.done = True
            except expat.ExpatError:
                self.done = True  # the real parser names the fault, with its line
            if not self.done and self.seen > MAX_PROLOGUE_BYTES:
                raise DatasetFileError("The XML file has over 1 MB before its first element: "
                                       "it is not PubMed XML.")
        return data

    @staticmethod
    def _doctype(name: str, sysid: str | None, pubid: str | None, internal: int) -> None:
        if internal:
            raise DatasetFileError(DTD_REFUSED)

    @staticmethod
    def _refuse(*args: object) -> None:
        raise DatasetFileError(DTD_REFUSED)

    @staticmethod
    def _root_reached(name: str, attributes: dict[str, str]) -> None:
        raise _RootReached


class _RootReached(Exception):
    """The guard's parser reached the root element: no declaration can follow."""


# --- one article ---------------------------------------------------------------------------------


def article_fields(elem: ET.Element) -> dict[str, Any]:
    """A PubmedArticle (or PubmedBookArticle) element -> the flat dict pubmed_articles yields."""
    if elem.tag == "PubmedBookArticle":
        return _book_fields(elem)
    citation = elem.find("MedlineCitation")
    article = citation.find("Article") if citation is not None else None
    if citation is None or article is None:
        return _empty(pmid=_text(elem.find("MedlineCitation/PMID")))
    ids = _article_ids(elem.find("PubmedData/ArticleIdList"))
    journal = article.find("Journal")
    return {
        "pmid": _text(citation.find("PMID")),
        "doi": ids.get("doi") or _elocation_doi(article),
        "pmcid": ids.get("pmc", ""),
        "title": _text(article.find("ArticleTitle")) or _text(article.find("VernacularTitle")),
        "abstract": _abstract(article.find("Abstract")),
        "journal": (_text(journal.find("Title")) or _text(journal.find("ISOAbbreviation")))
        if journal is not None else _text(citation.find("MedlineJournalInfo/MedlineTA")),
        "year": _year(journal.find("JournalIssue/PubDate") if journal is not None else None)
        or _year(article.find("ArticleDate")),
        "authors": _authors(article.find("AuthorList")),
        "mesh": [_text(d) for d in citation.iterfind("MeshHeadingList/MeshHeading/DescriptorName")],
        "publication_types": [_text(p) for p in
                              article.iterfind("PublicationTypeList/PublicationType")],
        "keywords": [k for k in (_text(k) for k in citation.iterfind("KeywordList/Keyword")) if k],
    }


def _book_fields(elem: ET.Element) -> dict[str, Any]:
    document = elem.find("BookDocument")
    if document is None:
        return _empty(pmid="")
    ids = _article_ids(elem.find("PubmedBookData/ArticleIdList"))
    book_title = _text(document.find("Book/BookTitle"))
    return {
        **_empty(pmid=_text(document.find("PMID"))),
        "doi": ids.get("doi", ""),
        "pmcid": ids.get("pmc", ""),
        "title": _text(document.find("ArticleTitle")) or book_title,
        "abstract": _abstract(document.find("Abstract")),
        "journal": book_title,
        "year": _year(document.find("Book/PubDate")),
        "authors": _authors(document.find("AuthorList")),
        "publication_types": [_text(p) for p in document.iterfind("PublicationType")],
        "keywords": [k for k in (_text(k) for k in document.iterfind("KeywordList/Keyword")) if k],
    }


def _empty(*, pmid: str) -> dict[str, Any]:
    return {"pmid": pmid, "doi": "", "pmcid": "", "title": "", "abstract": "", "journal": "",
            "year": "", "authors": [], "mesh": [], "publication_types": [], "keywords": []}


def _text(elem: ET.Element | None) -> str:
    """An element's text with its inline markup (<i>, <sup>) flattened and spaces collapsed."""
    if elem is None:
        return ""
    return _SPACES.sub(" ", "".join(elem.itertext())).strip()


def _abstract(abstract: ET.Element | None) -> str:
    """The abstract's sections in order; a labelled section keeps its label ("METHODS: ...")."""
    if abstract is None:
        return ""
    parts = []
    for section in abstract.iterfind("AbstractText"):
        text = _text(section)
        label = (section.get("Label") or "").strip()
        if label and label.upper() != "UNLABELLED":
            text = f"{label}: {text}" if text else ""
        if text:
            parts.append(text)
    return " ".join(parts)


def _article_ids(id_list: ET.Element | None) -> dict[str, str]:
    if id_list is None:
        return {}
    ids: dict[str, str] = {}
    for item in id_list.iterfind("ArticleId"):
        kind = (item.get("IdType") or "").lower()
        if kind and kind not in ids and _text(item):
            ids[kind] = _text(item)
    return ids


def _elocation_doi(article: ET.Element) -> str:
    for location in article.iterfind("ELocationID"):
        if location.get("EIdType") == "doi" and location.get("ValidYN", "Y") == "Y":
            return _text(location)
    return ""


def _year(date: ET.Element | None) -> str:
    """PubDate's Year, else the year in MedlineDate ("1998 Dec-1999 Jan" -> 1998)."""
    if date is None:
        return ""
    year = _text(date.find("Year"))
    if year:
        return year
    found = _YEAR.search(_text(date.find("MedlineDate")))
    return found.group(1) if found else ""


def _authors(author_list: ET.Element | None) -> list[str]:
    """"Last FM" per author (PubMed's short form); a group author by its collective name."""
    if author_list is None:
        return []
    names = []
    for author in author_list.iterfind("Author"):
        last = _text(author.find("LastName"))
        initials = _text(author.find("Initials"))
        if not initials:
            initials = "".join(p[0] for p in _text(author.find("ForeName")).split() if p[:1])
        name = f"{last} {initials}".strip() if last else _text(author.find("CollectiveName"))
        if name:
            names.append(name)
    return names


# --- as a reader ---------------------------------------------------------------------------------


def read_pubmed_xml(path: Path) -> RecordStream:
    """The file (.xml, or gzip-compressed whatever its name) as a RecordStream: one record per
    article, positioned by its article number. `details["no_abstract"]` counts the articles
    without an abstract once the stream has been read (they are kept with their title)."""
    f = path.open("rb")
    try:
        compressed = f.read(2) == GZIP_MAGIC
        f.seek(0)
        raw: BinaryIO = gzip.GzipFile(fileobj=f, mode="rb") if compressed else f
    except BaseException:
        f.close()
        raise
    details: dict[str, Any] = {"no_abstract": 0, "compressed": compressed}

    def records() -> Iterator[Record]:
        number = 0
        try:
            articles = pubmed_articles(raw, max_bytes=max_decompressed_bytes() if compressed
                                       else None)
            for number, article in enumerate(articles, start=1):
                where = f"Article {number:,}"
                article["title"] = check_field(article["title"], where)
                article["abstract"] = check_field(article["abstract"], where)
                if not article["abstract"]:
                    details["no_abstract"] += 1
                yield number, article
            if number == 0:
                raise DatasetFileError("The PubMed XML file holds no articles.")
            if details["no_abstract"]:
                details.setdefault("notes", []).append(no_abstract_note(details["no_abstract"]))
        finally:
            f.close()

    return RecordStream("pubmed_xml", "utf-8", list(COLUMNS), records(), details=details,
                        close=f.close)


def no_abstract_note(count: int) -> str:
    if count == 1:
        return "1 article has no abstract; kept with its title."
    return f"{count:,} articles have no abstract; kept with their title."
