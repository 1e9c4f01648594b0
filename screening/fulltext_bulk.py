"""Many reports' PDFs at once (several files, or ZIPs of them), each matched to a record of the
session at the full-text stage, then attached through the single upload's own service
(screening.fulltext.fulltext_report_attach): the same bounds, the same refusals, and nothing
kept of a file that is refused.

A file is matched, in this order, by a DOI in its name ("10.1000_xyz.pdf": a name cannot hold
"/"), a PMID as its name ("12345678.pdf", "PMID_12345678.pdf"), a DOI in the start of its text
(about its first page) or its document information, a "PMID: ..." there, and last by a record's
title found in that text (or its information's title, or its name), compared without case,
accents, spaces or punctuation so a title broken over lines or hyphenated still matches. The
first rule that finds a record decides: one record is a match, more is "ambiguous".

A record that already has its report keeps it (replace it from the record's page), and a record
two files of one upload match gets the first.
"""

from __future__ import annotations

import io
import re
import unicodedata
import urllib.parse
import zipfile
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import PurePosixPath
from typing import Any

from django.conf import settings
from django.core.files.base import ContentFile

from projects import policy
from screening import fulltext, fulltext_selectors, visibility
from screening.errors import ScreeningError
from screening.fulltext_pdf import MB, PdfRefused, pdf_text
from screening.identity import record_title_shown
from screening.models import FullTextReport, Record, ScreeningSession

MAX_FILES = 200
# The start of a report's text read for its identifiers and title: about a dense first page.
TEXT_START_CHARS = 6000
# A shorter title ("Editorial", "Reply") would match the start of too many reports.
MIN_TITLE_CHARS = 20

ATTACHED, NOT_MATCHED, AMBIGUOUS, REFUSED = "attached", "not_matched", "ambiguous", "refused"

_DOI_PREFIX = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", re.IGNORECASE)
_DOI_IN_NAME = re.compile(r"10\.\d{4,9}\S*")
_DOI_IN_TEXT = re.compile(r"10\.\d{4,9}/[^\s\"<>]+")
_PMID_NAME = re.compile(r"^(?:pmid[\s_:-]*)?(\d{1,9})(?![\d.])")
_PMID_IN_TEXT = re.compile(r"\bPMID\s*:?\s*(\d{1,9})\b", re.IGNORECASE)


@dataclass(frozen=True)
class BulkFile:
    """What became of one file: `outcome` is attached, not_matched, ambiguous or refused;
    `how` the rule that matched it (doi, pmid, title); `record` and `row` the record's id and
    its row in the collection."""

    name: str
    outcome: str
    how: str = ""
    record: int | None = None
    row: int | None = None
    title: str = ""
    detail: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class _Candidate:
    record: Record
    doi: str
    pmid: str
    title: str


def _doi_clean(value: str) -> str:
    return _DOI_PREFIX.sub("", value.strip()).lower().rstrip(".,;:)]}>'\"")


def _doi_key(value: str) -> str:
    """A DOI as a file name can hold it: every character but letters, digits, "." and "-"
    counts as one separator, so "10.1000/xyz", "10.1000_xyz" and "10.1000%2Fxyz" agree."""
    return re.sub(r"[^a-z0-9.\-]+", "_", value.lower())


def _title_key(value: str) -> str:
    decomposed = unicodedata.normalize("NFKD", value.casefold())
    return "".join(ch for ch in decomposed if ch.isalnum())


def _candidates(session: ScreeningSession) -> list[_Candidate]:
    out = []
    for record, _labels in fulltext_selectors.fulltext_records(session=session):
        ids = {k: str(v) for k, v in (record.identifiers or {}).items() if v}
        title = _title_key(record.title)
        out.append(_Candidate(record=record, doi=_doi_clean(ids.get("doi", "")),
                              pmid=ids.get("pmid", "").removeprefix("PMID:").strip()
                              .lstrip("0"),
                              title=title if len(title) >= MIN_TITLE_CHARS else ""))
    return out


def _prefix_of(found: str, key: str) -> bool:
    """`key` is `found`, or starts it with no letter or digit right after ("10.1/a" in
    "10.1/a.full" or "10.1_a_(1)", not in "10.1/ab")."""
    return bool(key) and found.startswith(key) and (
        len(found) == len(key) or not found[len(key)].isalnum())


def _longest(found: str, keys: dict[int, str]) -> set[int]:
    """The records whose key is the longest one found in `found`."""
    hits = {pk: len(key) for pk, key in keys.items() if _prefix_of(found, key)}
    best = max(hits.values(), default=0)
    return {pk for pk, length in hits.items() if length == best}


def _by_name(stem: str, pool: list[_Candidate]) -> tuple[str, set[int]]:
    unquoted = urllib.parse.unquote(stem).strip()
    doi = _DOI_IN_NAME.search(unquoted)
    if doi:
        keys = {c.record.pk: _doi_key(c.doi) for c in pool if c.doi}
        hits = _longest(_doi_key(doi.group(0)), keys)
        if hits:
            return "doi", hits
    pmid = _PMID_NAME.match(unquoted.lower())
    if pmid:
        hits = {c.record.pk for c in pool if c.pmid and c.pmid == pmid.group(1).lstrip("0")}
        if hits:
            return "pmid", hits
    return "", set()


def _by_text(text: str, info: list[str], stem: str, pool: list[_Candidate]
             ) -> tuple[str, set[int]]:
    searched = "\n".join([text, *info])
    keys = {c.record.pk: c.doi for c in pool if c.doi}
    hits = set()
    for found in {_doi_clean(m.group(0)) for m in _DOI_IN_TEXT.finditer(searched)}:
        hits |= _longest(found, keys)
    if hits:
        return "doi", hits
    pmids = {m.group(1).lstrip("0") for m in _PMID_IN_TEXT.finditer(searched)}
    hits = {c.record.pk for c in pool if c.pmid and c.pmid in pmids}
    if hits:
        return "pmid", hits
    titles = {c.record.pk: c.title for c in pool if c.title}
    hits = set()
    for where in [_title_key(text), *(_title_key(v) for v in [*info, stem])]:
        found = {pk: len(key) for pk, key in titles.items() if key in where}
        best = max(found.values(), default=0)
        hits |= {pk for pk, length in found.items() if length == best}
    return ("title", hits) if hits else ("", set())


def _info(data: bytes) -> list[str]:
    """The PDF's document information (title, subject, keywords...): where a publisher often
    writes the DOI. Read after pdf_text accepted the file; [] if it has none."""
    from pypdf import PdfReader

    try:
        meta = PdfReader(io.BytesIO(data), strict=False).metadata or {}
        return [str(value)[:2000] for value in meta.values() if isinstance(value, str)]
    except Exception:  # a malformed information dictionary only means nothing to match on
        return []


def _named(rows: set[int], pool: list[_Candidate]) -> str:
    return ", ".join(str(c.record.position + 1) for c in pool if c.record.pk in rows)


def _outcome(name: str, how: str, hits: set[int], pool: list[_Candidate]) -> BulkFile | Record:
    """The record matched, or the file's outcome when there is not exactly one."""
    if not hits:
        return BulkFile(name=name, outcome=NOT_MATCHED, detail=(
            "No record at the full-text stage has this file's DOI, PMID or title."))
    if len(hits) > 1:
        return BulkFile(name=name, outcome=AMBIGUOUS, how=how, detail=(
            f"Its {how.upper() if how != 'title' else how} matches records {_named(hits, pool)}: "
            "attach it from the right record's page."))
    return next(c.record for c in pool if c.record.pk in hits)


def _match(name: str, data: bytes, pool: list[_Candidate]) -> tuple[str, BulkFile | Record]:
    stem = PurePosixPath(name).stem
    how, hits = _by_name(stem, pool)
    if not hits:
        try:
            text = pdf_text(data).text[:TEXT_START_CHARS]
        except PdfRefused as exc:
            return "", BulkFile(name=name, outcome=REFUSED, detail=str(exc))
        how, hits = _by_text(text, _info(data), stem, pool)
    return how, _outcome(name, how, hits, pool)


def _attach(*, user: Any, name: str, upload: Any, data: bytes, pool: list[_Candidate],
            taken: dict[int, str]) -> BulkFile:
    how, found = _match(name, data, pool)
    if isinstance(found, BulkFile):
        return found
    record = found
    said = {"how": how, "record": record.pk, "row": record.position + 1,
            "title": record_title_shown(record=record)}
    if record.pk in taken:
        return BulkFile(name=name, outcome=REFUSED, **said, detail=(
            f"{taken[record.pk]} in this upload matched record {record.position + 1} "
            "already: attach the right one from the record's page. Nothing was kept."))
    report = FullTextReport.objects.filter(record=record).first()
    if report is not None and report.status == FullTextReport.Status.RETRIEVED:
        return BulkFile(name=name, outcome=REFUSED, **said, detail=(
            f"Record {record.position + 1} has its report already: replace it from the "
            "record's page. Nothing was kept."))
    upload.seek(0)
    try:
        fulltext.fulltext_report_attach(user=user, record=record, uploaded_file=upload)
    except ScreeningError as exc:
        return BulkFile(name=name, outcome=REFUSED, **said, detail=str(exc))
    taken[record.pk] = name
    return BulkFile(name=name, outcome=ATTACHED, **said)


def _zip_entries(upload: Any, limit: int) -> Iterator[tuple[str, Any, str]]:
    """(name, file, "") per PDF in a ZIP, or (name, None, why) for an entry not read."""
    name = PurePosixPath(str(upload.name)).name
    try:
        archive = zipfile.ZipFile(upload)
        infos = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError):
        yield name, None, "This ZIP could not be read. Nothing was kept."
        return
    for info in infos:
        entry = f"{name}/{info.filename}"
        if info.is_dir() or info.filename.startswith("__MACOSX/"):
            continue
        if not info.filename.lower().endswith(".pdf"):
            yield entry, None, "Only the .pdf files of a ZIP are read. Nothing was kept."
        elif info.file_size > limit:
            yield entry, None, (f"This PDF is {info.file_size / MB:.1f} MB, over the limit of "
                                f"{limit / MB:.0f} MB (FULLTEXT_MAX_PDF_MB). Nothing was kept.")
        else:
            try:
                with archive.open(info) as handle:
                    data = handle.read(limit + 1)
            except (zipfile.BadZipFile, RuntimeError, OSError, ValueError) as exc:
                yield entry, None, f"This entry could not be read ({exc}). Nothing was kept."
                continue
            yield entry, ContentFile(data, name=PurePosixPath(info.filename).name), ""


def _files(files: list[Any]) -> Iterator[tuple[str, Any, str]]:
    limit = settings.FULLTEXT_MAX_PDF_MB * MB
    for upload in files:
        name = PurePosixPath(str(upload.name).replace("\\", "/")).name
        head = upload.read(4)
        upload.seek(0)
        if name.lower().endswith(".zip") or head == b"PK\x03\x04":
            yield from _zip_entries(upload, limit)
        else:
            yield name, upload, ""


def fulltext_bulk_attach(*, user: Any, session: ScreeningSession, files: list[Any]
                         ) -> list[BulkFile]:
    """Match each PDF (or each PDF of a ZIP) to a record at full text and attach it; what
    became of every file, in the order given. RoleRequired for someone who may not attach
    reports, policy.FullTextClosed for a blind reviewer before the stop; ScreeningError when
    no file was sent."""
    policy.require(user=user, action=policy.Action.SCREEN, obj=session)
    visibility.fulltext_require_open(user=user, session=session)
    if not files:
        raise ScreeningError("Choose the reports' PDFs (or a ZIP of them) to attach.")
    pool, taken, out = _candidates(session), {}, []
    limit = settings.FULLTEXT_MAX_PDF_MB * MB
    for name, upload, refused in _files(files):
        if len(out) >= MAX_FILES:
            # One line for the rest, however many entries a ZIP holds.
            out.append(BulkFile(name=name, outcome=REFUSED, detail=(
                f"Over {MAX_FILES} files in one upload: this one and those after it were not "
                "read. Send them again. Nothing was kept of them.")))
            break
        if refused:
            done = BulkFile(name=name, outcome=REFUSED, detail=refused)
        elif (size := upload.size or 0) > limit:
            done = BulkFile(name=name, outcome=REFUSED, detail=(
                f"This PDF is {size / MB:.1f} MB, over the limit of {limit / MB:.0f} MB "
                "(FULLTEXT_MAX_PDF_MB). Nothing was kept."))
        else:
            done = _attach(user=user, name=name, upload=upload, data=upload.read(limit + 1),
                           pool=pool, taken=taken)
        out.append(done)
    return out
