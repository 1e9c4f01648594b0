"""Decide a text file's encoding from its bytes, refusing to guess when the bytes disagree."""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from charset_normalizer import from_bytes

from .errors import DatasetFileError, names_listed

UTF8_BOM = b"\xef\xbb\xbf"
CHUNK = 1 << 20
# Single-byte encodings we accept when a file is not UTF-8: what Excel on Windows writes.
FALLBACK_ENCODINGS = ["cp1252", "latin_1"]
# A well-formed multi-byte UTF-8 sequence; in a cp1252 file these are (almost) never produced.
_UTF8_MULTIBYTE = re.compile(
    rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}"
)


@dataclass
class _Utf8Scan:
    """What reading a file as strict UTF-8 found: its first line (and byte) that is not UTF-8,
    and whether it holds real multi-byte UTF-8 anywhere (both together: mixed encodings)."""

    lines: int = 0
    offset: int = 0
    bad_line: int | None = None
    bad_offset: int = 0
    saw_multibyte: bool = False


def detect_encoding(path: Path) -> tuple[str, str]:
    """Return (codec, how it was decided). Streams the whole file once; memory stays at CHUNK.

    A NUL byte anywhere is refused: in the first 8 KB it means UTF-16 or binary, further on a
    damaged line, named in the message.

    The whole file is checked as strict UTF-8 because a sample can miss the one cp1252 byte on
    line 90,000. A file that is valid UTF-8 in places and not in others is refused: decoding
    it either way would corrupt part of it.
    """
    with path.open("rb") as f:
        head = f.read(CHUNK)
        if not head.strip(UTF8_BOM + b" \t\r\n"):
            raise DatasetFileError("The file is empty.")
        if b"\x00" in head[:8192]:
            raise DatasetFileError(
                "The file contains NUL bytes: it is binary (or UTF-16), not a text file."
            )
        scan = _utf8_scan(f, head)
        has_bom = head.startswith(UTF8_BOM)
        if scan.bad_line is None:
            return ("utf-8-sig", "UTF-8 byte-order mark") if has_bom else ("utf-8", "valid UTF-8")
        if has_bom or scan.saw_multibyte:
            raise DatasetFileError(mixed_encodings_message(path))
        f.seek(max(0, scan.bad_offset - CHUNK // 2))
        sample = head + f.read(CHUNK)
    best = from_bytes(sample, cp_isolation=FALLBACK_ENCODINGS).best()
    if best is None:
        raise DatasetFileError(
            f"Line {scan.bad_line} is not valid UTF-8 and the file does not read as Windows-1252 "
            "or Latin-1 either. Re-save it as UTF-8."
        )
    return best.encoding, (f"not UTF-8 (line {scan.bad_line}); charset-normalizer chose "
                           f"{best.encoding}")


def _utf8_scan(f: IO[bytes], head: bytes) -> _Utf8Scan:
    """The file from `head` on, decoded as strict UTF-8 a chunk at a time; it stops early once
    the file is known to mix encodings."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    scan = _Utf8Scan()
    chunk = head
    while chunk:
        _refuse_nul(chunk, lines_before=scan.lines)
        if scan.bad_line is None:
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as exc:
                start = max(exc.start, 0)
                scan.bad_line = scan.lines + chunk[:start].count(b"\n") + 1
                scan.bad_offset = scan.offset + start
        scan.saw_multibyte = scan.saw_multibyte or bool(_UTF8_MULTIBYTE.search(chunk))
        if scan.bad_line is not None and scan.saw_multibyte:
            break
        scan.lines += chunk.count(b"\n")
        scan.offset += len(chunk)
        chunk = f.read(CHUNK)
    if scan.bad_line is None:
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            scan.bad_line, scan.bad_offset = scan.lines + 1, scan.offset
    return scan


def _refuse_nul(chunk: bytes, *, lines_before: int) -> None:
    # Past the head a NUL is damage, not UTF-16: name its line so it can be found. Refused
    # rather than dropped: PostgreSQL cannot store it, and the file's other lines may be
    # damaged in ways no check sees.
    nul = chunk.find(b"\x00")
    if nul >= 0:
        line = lines_before + chunk.count(b"\n", 0, nul) + 1
        raise DatasetFileError(
            f"Line {line} contains a NUL byte, which no text file holds: the file is "
            "damaged or binary. Remove it and upload again."
        )


def mixed_encodings_message(path: Path) -> str:
    """Why a file that is UTF-8 in places and not in others is refused, naming the lines that
    are not UTF-8 (the first few, and how many in all), so they can be found and re-typed.
    Where those are most of the file, the UTF-8 lines are the odd ones out and are named too."""
    bad, bad_count, good, good_count = _lines_by_encoding(path)
    shown = names_listed(bad) if bad_count <= len(bad) else (
        f"{', '.join(map(str, bad))} and {bad_count - len(bad):,} more")
    subject = f"Line {shown} is" if bad_count == 1 else f"Lines {shown} are"
    also = ""
    if bad_count > good_count:
        utf8 = names_listed(good) if good_count <= len(good) else (
            f"{', '.join(map(str, good))} and {good_count - len(good):,} more")
        also = f" (UTF-8 with accents: line{'s' if good_count > 1 else ''} {utf8})"
    return (f"{subject} not valid UTF-8 but other lines are{also}: the file mixes encodings. "
            "Re-save it as UTF-8.")


def _lines_by_encoding(path: Path, *, shown: int = 10) -> tuple[list[int], int, list[int], int]:
    """(first `shown` lines that are not UTF-8, how many, first `shown` lines that are UTF-8
    beyond ASCII, how many). Reads a line at most CHUNK bytes at a time, so one enormous line
    cannot take the memory; a line longer than that is checked piece by piece."""
    bad: list[int] = []
    good: list[int] = []
    bad_count = good_count = 0
    number = 1
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    line_bad = line_multibyte = False
    with path.open("rb") as f:
        while piece := f.readline(CHUNK):
            if not line_bad:
                try:
                    decoder.decode(piece, final=piece.endswith(b"\n"))
                except UnicodeDecodeError:
                    line_bad = True
            text = piece.removeprefix(UTF8_BOM) if number == 1 else piece  # a BOM is no accent
            line_multibyte = line_multibyte or bool(_UTF8_MULTIBYTE.search(text))
            if not piece.endswith(b"\n") and len(piece) == CHUNK:
                continue  # the same line goes on in the next piece
            if line_bad:
                bad_count += 1
                if len(bad) < shown:
                    bad.append(number)
            elif line_multibyte:
                good_count += 1
                if len(good) < shown:
                    good.append(number)
            decoder.reset()
            line_bad = line_multibyte = False
            number += 1
    return bad, bad_count, good, good_count
