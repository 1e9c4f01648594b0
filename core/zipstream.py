"""Stream a folder as a zip without building it in memory or on disk first."""

from __future__ import annotations

import zipfile
from collections.abc import Iterator
from pathlib import Path

CHUNK = 1024 * 1024


class _Sink:
    """A write-only, unseekable file: zipfile then writes data descriptors, so no seeks."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.offset = 0

    def write(self, data: bytes) -> int:
        self.parts.append(bytes(data))
        self.offset += len(data)
        return len(data)

    def tell(self) -> int:
        return self.offset

    def flush(self) -> None:
        pass

    def drain(self) -> bytes:
        data = b"".join(self.parts)
        self.parts.clear()
        return data


def zip_directory_stream(folder: Path, *, prefix: str) -> Iterator[bytes]:
    sink = _Sink()
    # Weights barely compress; level 1 keeps CPU low while still shrinking the JSON and vocab.
    with zipfile.ZipFile(sink, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            arcname = f"{prefix}/{path.relative_to(folder).as_posix()}"
            with path.open("rb") as src, archive.open(arcname, "w", force_zip64=True) as dst:
                while chunk := src.read(CHUNK):
                    dst.write(chunk)
                    yield sink.drain()
            yield sink.drain()
    yield sink.drain()
