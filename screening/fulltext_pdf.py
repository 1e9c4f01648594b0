"""A full-text report's text, read from its PDF with pypdf within bounds.

A PDF is a container of compressed streams: a 100 kB file can inflate to gigabytes, and a
malformed one can send a parser anywhere. So the bytes are bounded before pypdf sees them
(FULLTEXT_MAX_PDF_MB), pypdf's own per-stream limits are set to what is left of the total
(FULLTEXT_MAX_INFLATED_MB), every page's content streams and form XObjects are counted against
that total before their text is extracted, the pages are counted (FULLTEXT_MAX_PAGES) and so
are the characters extracted (FULLTEXT_MAX_TEXT_CHARS). Any failure is a PdfRefused with a
sentence for the reviewer, and the caller keeps nothing.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

from django.conf import settings

MB = 1024 * 1024
# pypdf decodes a page's form XObjects while it extracts text; each is counted below, and the
# number it will decode per page is capped too (its default is 5,000).
XFORMS_PER_PAGE = 200


class PdfRefused(ValueError):
    """The file is not a PDF we read: broken, encrypted, or past a limit. Its message says
    which, for the person who uploaded it."""


@dataclass(frozen=True)
class PdfText:
    text: str
    pages: int
    inflated_bytes: int


@dataclass(frozen=True)
class Limits:
    max_bytes: int
    max_pages: int
    max_inflated: int
    max_chars: int

    @classmethod
    def from_settings(cls) -> Limits:
        return cls(max_bytes=settings.FULLTEXT_MAX_PDF_MB * MB,
                   max_pages=settings.FULLTEXT_MAX_PAGES,
                   max_inflated=settings.FULLTEXT_MAX_INFLATED_MB * MB,
                   max_chars=settings.FULLTEXT_MAX_TEXT_CHARS)


def _inflated_size(page: Any) -> int:
    """Bytes the page's content streams and its form XObjects decode to."""
    total = 0
    contents = page.get_contents()
    if contents is not None:
        total += len(contents.get_data())
    resources = page.get("/Resources")
    xobjects = resources.get_object().get("/XObject") if resources is not None else None
    if xobjects is not None:
        for ref in xobjects.get_object().values():
            xobject = ref.get_object()
            if xobject.get("/Subtype") == "/Form":
                total += len(xobject.get_data())
    return total


def pdf_text(data: bytes, *, limits: Limits | None = None) -> PdfText:
    """The text of a PDF's pages, in order, one blank line between pages; PdfRefused if the
    bytes are not a readable PDF within the limits."""
    limits = limits or Limits.from_settings()
    if len(data) > limits.max_bytes:
        raise PdfRefused(f"This PDF is {len(data) / MB:.1f} MB, over the limit of "
                         f"{limits.max_bytes / MB:.0f} MB (FULLTEXT_MAX_PDF_MB). Nothing was kept.")
    if b"%PDF-" not in data[:1024]:
        raise PdfRefused("This file is not a PDF (it does not start with %PDF-). Nothing was kept.")
    try:
        return _read(data, limits)
    except PdfRefused:
        raise
    except Exception as exc:  # hostile input: any parser failure is a refusal
        raise PdfRefused(f"This PDF could not be read ({type(exc).__name__}: "
                         f"{str(exc)[:200] or 'malformed'}). Nothing was kept.") from exc


def _read(data: bytes, limits: Limits) -> PdfText:
    from pypdf import PdfReader, apply_configuration
    from pypdf.errors import LimitReachedError

    per_stream = max(1, limits.max_inflated)  # pypdf reads 0 as "no limit"
    with apply_configuration(
            zlib_maximum_output_length=per_stream, lzw_maximum_output_length=per_stream,
            run_length_maximum_output_length=per_stream, brotli_maximum_output_length=per_stream,
            array_based_stream_maximum_output_length=per_stream,
            stream_decoding_work_maximum_length=2 * per_stream,
            xform_maximum_invocations_per_extraction=XFORMS_PER_PAGE):
        try:
            reader = PdfReader(io.BytesIO(data), strict=False)
            if reader.is_encrypted and not reader.decrypt(""):
                raise PdfRefused("This PDF is encrypted with a password: upload a copy without "
                                 "one. Nothing was kept.")
            count = len(reader.pages)
            if count > limits.max_pages:
                raise PdfRefused(f"This PDF has {count} pages, over the limit of "
                                 f"{limits.max_pages} (FULLTEXT_MAX_PAGES). Nothing was kept.")
            parts, inflated, chars = [], 0, 0
            for page in reader.pages:
                inflated += _inflated_size(page)
                if inflated > limits.max_inflated:
                    raise LimitReachedError("inflated")
                text = page.extract_text() or ""
                chars += len(text)
                if chars > limits.max_chars:
                    raise PdfRefused(f"This PDF's text is over {limits.max_chars:,} characters "
                                     "(FULLTEXT_MAX_TEXT_CHARS). Nothing was kept.")
                parts.append(text.strip())
        except LimitReachedError:
            raise PdfRefused(f"This PDF's streams inflate past "
                             f"{limits.max_inflated / MB:.0f} MB "
                             "(FULLTEXT_MAX_INFLATED_MB). Nothing was kept.") from None
    return PdfText(text="\n\n".join(p for p in parts if p), pages=count,
                   inflated_bytes=inflated)
