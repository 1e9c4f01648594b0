"""Where a batch keeps its files: MEDIA_ROOT/batches/<owner id>/<batch id hex>/.

The first folder is named after whoever created the batch (BatchJob.owner, "created by"); it
decides nothing about who may read the files: projects.policy does, on the row.

Rows store paths relative to MEDIA_ROOT (like Dataset.rows_path), so the web process and an
inference worker that mount MEDIA_ROOT at different places still agree. Nothing a person typed
ever becomes part of a path: the folder is named by ids and the files by fixed names.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import IO

from django.conf import settings

from core import filestore
from core.diskspace import disk_full_refused

KEEP_SECONDS = 7 * 24 * 3600  # finished batches, and their files, are removed after a week
RESULT_NAME = "result.csv"
# Beside the CSV: each article's identifiers, original record and prediction, one JSON a line;
# the JSON Lines download as it is, and what the RIS download is made from.
RECORDS_NAME = "result.jsonl"


def batches_root() -> Path:
    return Path(settings.MEDIA_ROOT) / "batches"


def batch_folder(*, owner_id: int, batch_id: uuid.UUID) -> Path:
    return batches_root() / str(int(owner_id)) / batch_id.hex


def input_name(filename: str) -> str:
    # The reader sniffs the format from the original name (kept on the row); the file on disk
    # keeps only a tidy extension.
    suffix = "".join(c for c in Path(filename).suffix.lower() if c.isalnum())[:8]
    return f"input.{suffix}" if suffix else "input"


def input_store(*, folder: Path, filename: str, write: Callable[[IO[bytes]], None]) -> Path:
    """Write a new batch's input into its new folder; return the file's path.

    Written as ``input.<ext>.part`` then renamed, so a worker never sees half a file. On any
    failure the folder is removed before the error leaves; a full disk becomes
    core.diskspace.DiskFull.
    """
    source = folder / input_name(filename)
    part = source.with_name(source.name + ".part")
    try:
        with disk_full_refused():
            folder.mkdir(parents=True)
            with part.open("wb") as out:
                write(out)
            os.replace(part, source)
        filestore.file_publish(name=relative(source))  # for an inference worker elsewhere
    except BaseException:
        remove_folder(folder)
        raise
    return source


def relative(path: Path) -> str:
    return str(path.relative_to(Path(settings.MEDIA_ROOT)))


def absolute(relative_path: str) -> Path:
    return Path(settings.MEDIA_ROOT) / relative_path


def remove_folder(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)


def input_discard(relative_path: str) -> None:
    """The upload is not kept once its batch ends: this node's copy and the shared one go."""
    if relative_path:
        absolute(relative_path).unlink(missing_ok=True)
        filestore.file_delete(name=relative_path)


def results_publish(*, folder: Path) -> None:
    """The records first: a CSV that other nodes can read is what says the results are whole."""
    for name in (RECORDS_NAME, RESULT_NAME):
        filestore.file_publish(name=relative(folder / name))


def published_names(*, input_path: str, result_path: str) -> list[str]:
    """Every shared file a batch may have: its input and its two results."""
    names = [input_path] if input_path else []
    if result_path:
        names += [result_path, str(Path(result_path).with_name(RECORDS_NAME))]
    return names
