"""Where a running batch has got to, so that a batch whose inference worker died resumes from
its last completed chunk instead of asking for the file again.

After every chunk (a window of articles, packing.WINDOW) the runner flushes and fsyncs its two
result parts, then replaces ``checkpoint.json`` beside them: how many articles of the file are
written, the counts so far, the parts' sizes at that moment and the model it classified with.
A resumed run cuts the parts back to those sizes (whatever a dying worker wrote after the last
checkpoint goes) and carries on from the next article. A checkpoint that does not match the
parts on disk, or was written with another training of the model, is ignored: the batch then
starts again from its first article, which is always correct, only slower.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO

from classification.batches import storage
from classification.models import MLModel

logger = logging.getLogger(__name__)

NAME = "checkpoint.json"


@dataclass(frozen=True)
class Checkpoint:
    rows: int  # articles of the file whose result rows are in both parts
    processed: int
    skipped: int
    csv_bytes: int
    records_bytes: int
    model: str  # model_fingerprint() of the model the rows were classified with


def result_parts(*, folder: Path) -> tuple[Path, Path]:
    """The CSV and JSON Lines results while they are written (renamed once complete)."""
    return (folder / f"{storage.RESULT_NAME}.part", folder / f"{storage.RECORDS_NAME}.part")


def model_fingerprint(ml_model: MLModel) -> str:
    """Changes whenever the model is trained again: a resume must not mix two trainings."""
    trained = ml_model.trained_at.isoformat() if ml_model.trained_at else ""
    return f"{ml_model.pk}:{ml_model.artifact_digest or ml_model.artifact_path}:{trained}"


def checkpoint_write(*, folder: Path, parts: tuple[IO[str], IO[str]], rows: int,
                     processed: int, skipped: int, model: str) -> None:
    """Make the parts durable, then record them: a checkpoint never points past the disk."""
    sizes = []
    for part in parts:
        part.flush()
        os.fsync(part.fileno())
        sizes.append(os.fstat(part.fileno()).st_size)
    point = Checkpoint(rows=rows, processed=processed, skipped=skipped, csv_bytes=sizes[0],
                       records_bytes=sizes[1], model=model)
    temporary = folder / f"{NAME}.part"
    with temporary.open("w", encoding="utf-8") as out:
        json.dump(asdict(point), out)
        out.flush()
        os.fsync(out.fileno())
    os.replace(temporary, folder / NAME)


def checkpoint_read(*, folder: Path) -> Checkpoint | None:
    try:
        return Checkpoint(**json.loads((folder / NAME).read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None


def checkpoint_resume(*, folder: Path, parts: tuple[Path, Path], model: str) -> Checkpoint | None:
    """The checkpoint to carry on from, with both parts cut back to it; None (and no parts,
    no checkpoint) when the batch must start from its first article."""
    point = checkpoint_read(folder=folder)
    sizes = (point.csv_bytes, point.records_bytes) if point else (0, 0)
    usable = (point is not None and point.model == model and all(
        part.is_file() and part.stat().st_size >= size for part, size in zip(parts, sizes,
                                                                              strict=True)))
    if not usable:
        if point is not None:
            logger.warning("batch folder %s: checkpoint does not match its parts or model; "
                           "starting from the first article", folder)
        checkpoint_discard(folder=folder, parts=parts)
        return None
    for part, size in zip(parts, sizes, strict=True):
        os.truncate(part, size)
    return point


def checkpoint_discard(*, folder: Path, parts: tuple[Path, Path]) -> None:
    for path in (*parts, folder / NAME, folder / f"{NAME}.part"):
        path.unlink(missing_ok=True)
