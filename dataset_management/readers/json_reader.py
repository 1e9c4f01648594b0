"""JSON: an array of objects (parsed incrementally, never whole) or JSON Lines."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .base import MAX_FIELD_CHARS, Record, RecordStream, check_columns, check_field
from .errors import DatasetFileError

CHUNK_CHARS = 1 << 20
# One record may hold several fields of up to MAX_FIELD_CHARS; past this it is not a record.
MAX_RECORD_CHARS = 4 * MAX_FIELD_CHARS
# A record is an object of fields, a field at most a list or a small object (kept as JSON
# text). Deeper than this is not a record; and far deeper, json's C decoder runs out of stack
# (RecursionError), at a depth that depends on the caller's own stack: the limit makes the
# refusal the same for the web, the API, the CLI and a batch.
MAX_NESTING = 32
_decoder = json.JSONDecoder()
_WS = " \t\r\n"


def read_json(path: Path, *, encoding: str) -> RecordStream:
    """A .json file: an array of objects, or JSON Lines saved under .json."""
    with path.open(encoding=encoding) as f:
        head = f.read(4096).lstrip("\ufeff" + _WS)
    if head.startswith("["):
        return _stream(path, encoding, "json", _array_records)
    if head.startswith("{") and _looks_like_jsonl(path, encoding):
        return _stream(path, encoding, "jsonl", _line_records)
    if head.startswith("{"):
        raise DatasetFileError(
            "The JSON file holds a single object where an array of records was expected."
        )
    raise DatasetFileError("The JSON file does not start with an array of records ('[').")


def read_jsonl(path: Path, *, encoding: str) -> RecordStream:
    return _stream(path, encoding, "jsonl", _line_records)


def _looks_like_jsonl(path: Path, encoding: str) -> bool:
    with path.open(encoding=encoding) as f:
        lines = (line for line in f if line.strip())
        first = next(lines, "")
        try:
            json.loads(first.lstrip("\ufeff"))
        except ValueError:
            return False
        except RecursionError:
            return True  # read as lines, so the refusal names the line
        return next(lines, None) is not None


def _stream(path: Path, encoding: str, fmt: str, parse) -> RecordStream:
    f = path.open(encoding=encoding)
    records = _objects(parse(f))
    try:
        first = next(records, None)
    except BaseException:
        f.close()
        raise
    if first is None:
        f.close()
        raise DatasetFileError("The JSON file has no records.")
    # Columns come from the first record; later records may add keys nobody maps.
    columns = check_columns(list(first[1]))

    def all_records() -> Iterator[Record]:
        try:
            yield from itertools.chain([first], records)
        finally:
            f.close()

    return RecordStream(fmt, encoding, columns, all_records(), close=f.close)


def _objects(items: Iterator[tuple[int, Any]]) -> Iterator[Record]:
    for number, value in items:
        if not isinstance(value, dict):
            raise DatasetFileError(f"Record {number} is not a JSON object.")
        if _too_deep(value):
            raise _nested(number)
        yield number, {str(k).strip(): _cell(v, number) for k, v in value.items()}


def _cell(value: Any, number: int) -> Any:
    if value is None:
        return ""
    if isinstance(value, list):
        return [check_field(str(v), f"Record {number}") for v in value if v is not None]
    if isinstance(value, dict):
        return json.dumps(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return check_field(str(value), f"Record {number}")


def _too_deep(record: dict[str, Any]) -> bool:
    """Whether any value nests past MAX_NESTING (the record itself is level 1); no recursion."""
    stack: list[tuple[Any, int]] = [(record, 1)]
    while stack:
        value, depth = stack.pop()
        for child in value.values() if isinstance(value, dict) else value:
            if isinstance(child, dict | list):
                if depth + 1 > MAX_NESTING:
                    return True
                stack.append((child, depth + 1))
    return False


def _nested(number: int) -> DatasetFileError:
    return DatasetFileError(
        f"Record {number} is nested more than {MAX_NESTING} levels deep; a record must be an "
        "object of plain fields."
    )


def _line_records(f) -> Iterator[tuple[int, Any]]:
    for number, line in enumerate(f, start=1):
        line = line.lstrip("\ufeff").strip()
        if not line:
            continue
        try:
            value = json.loads(line)
        except ValueError as exc:
            raise DatasetFileError(f"Line {number} is not valid JSON ({exc.msg}).") from None
        except RecursionError:
            raise _nested(number) from None
        yield number, value


def _array_records(f) -> Iterator[tuple[int, Any]]:
    """Decode one array element at a time with raw_decode, reading more text only as needed."""
    buf = f.read(CHUNK_CHARS).lstrip("\ufeff" + _WS)[1:]  # past the "["
    eof = False
    number = 0
    pos = 0
    while True:
        while True:
            pos = _skip_ws(buf, pos)
            if pos < len(buf) or eof:
                break
            buf, pos, eof = _refill(f, buf, pos)
        if pos >= len(buf):
            raise DatasetFileError("The JSON array is not closed: the file ends before ']'.")
        if buf[pos] == "]":
            rest = buf[pos + 1 :].strip() or f.read(CHUNK_CHARS).strip()
            if rest:
                raise DatasetFileError("Unexpected data after the end of the JSON array.")
            return
        if number and buf[pos] == ",":
            pos += 1
        elif number:
            raise DatasetFileError(f"Expected ',' between JSON records {number} and {number + 1}.")
        number += 1
        while True:
            pos = _skip_ws(buf, pos)
            if pos >= len(buf) and eof:
                raise DatasetFileError("The JSON array is not closed: the file ends before ']'.")
            try:
                value, end = _decoder.raw_decode(buf, pos)
                break
            except RecursionError:
                raise _nested(number) from None
            except json.JSONDecodeError as exc:
                if eof:
                    raise DatasetFileError(
                        f"Record {number} of the JSON array is malformed ({exc.msg})."
                    ) from None
                if len(buf) - pos > MAX_RECORD_CHARS:
                    raise DatasetFileError(
                        f"Record {number} of the JSON array is larger than 4 MB."
                    ) from None
                buf, pos, eof = _refill(f, buf, pos)
        pos = end
        yield number, value


def _skip_ws(buf: str, pos: int) -> int:
    while pos < len(buf) and buf[pos] in _WS:
        pos += 1
    return pos


def _refill(f, buf: str, pos: int) -> tuple[str, int, bool]:
    more = f.read(CHUNK_CHARS)
    return buf[pos:] + more, 0, not more
