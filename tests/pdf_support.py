"""PDFs written byte by byte for the full-text tests: real, valid files that any reader opens
(one Helvetica text line per page), a broken one, and hostile ones (a stream that inflates far
past its size, more pages than allowed)."""

from __future__ import annotations

import zlib


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def pdf_bytes(pages: list[str], *, inflate_to: int = 0, pad_to: int = 0) -> bytes:
    """A PDF of one page per text. `inflate_to`: every page's content stream is Flate-
    compressed and holds that many bytes once inflated (spaces after the text). `pad_to`: a
    trailing comment makes the file about that many bytes."""
    objects: list[bytes] = []
    count = len(pages)
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(count))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {count} >>".encode())
    font = 3 + 2 * count
    for i, text in enumerate(pages):
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents "
                       f"{4 + 2 * i} 0 R /Resources << /Font << /F1 {font} 0 R >> >> >>"
                       .encode())
        content = f"BT /F1 12 Tf 72 720 Td ({_escape(text)}) Tj ET".encode()
        if inflate_to:
            raw = content + b" " * max(0, inflate_to - len(content))
            body = zlib.compress(raw, 9)
            objects.append(b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(body)
                           + body + b"\nendstream")
        else:
            objects.append(b"<< /Length %d >>\nstream\n" % len(content) + content
                           + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1, xref)
    if pad_to > len(out):
        out += b"%" + b"x" * (pad_to - len(out) - 2) + b"\n"
    return bytes(out)


def broken_pdf() -> bytes:
    """Starts like a PDF and is nothing after: no objects, no cross-reference table."""
    return b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 9 0 R\n" + b"\x00\xff" * 200


def report_attach(*, user, record, text: str = "Methods: a randomised trial.") -> None:
    """Attach a one-page report to a record at full text through the service, as the page
    does: a full-text decision needs a retrieved report."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    from screening import fulltext

    record.refresh_from_db()
    fulltext.fulltext_report_attach(user=user, record=record, uploaded_file=SimpleUploadedFile(
        "report.pdf", pdf_bytes([text]), content_type="application/pdf"))
