"""Where an import's files go once they are written: the row saved, its files moved into
MEDIA_ROOT (renames on one filesystem, so each is atomic) and published, all or nothing; and
the undo that removes whatever a failed import had placed.

Split from services.py, which runs the import itself; these are its last step and its undo.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction

from core import filestore
from projects.services import activity_record

from .models import Dataset, dataset_upload_path
from .readers import DatasetFileError


def dataset_save_and_place(dataset: Dataset, *, workdir: Path, filename: str,
                           placed: list[Path], verb: str) -> None:
    """Save the row, log it, and move its files into place, all or nothing (`placed` lists
    the files moved so far, for the caller to remove if anything fails)."""
    media = Path(settings.MEDIA_ROOT)
    original_rel = dataset_upload_path(dataset, filename)
    rows_rel = f"datasets/{dataset.content_hash}/rows-{uuid.uuid4().hex[:12]}.parquet"
    with transaction.atomic():
        dataset.original_file.name = original_rel
        dataset.rows_path = rows_rel
        dataset.save()
        _record_created(dataset, verb=verb, actor=dataset.owner)
        # Renames, not copies: same filesystem, so each is atomic and instant.
        (media / rows_rel).parent.mkdir(parents=True, exist_ok=True)
        _place(workdir / "rows.parquet", media / rows_rel, placed)
        if not (media / original_rel).exists():  # same bytes uploaded by another owner
            _place(workdir / "upload", media / original_rel, placed)
        # Published before the row commits, so no node ever reads a dataset it cannot open.
        for path in placed:
            filestore.file_publish(name=str(path.relative_to(media)))


def placed_undo(*, media: Path, placed: list[Path], content_hash: str) -> None:
    """A failed import's files gone: those placed in media and the shared storage, and their
    folder if it is left empty."""
    for path in placed:
        path.unlink(missing_ok=True)
        filestore.file_delete(name=str(path.relative_to(media)))
    if content_hash:
        empty_dirs_remove(media / "datasets" / content_hash)


def duplicate_refuse(*, project_id: int, content_hash: str) -> None:
    # Per project: a colleague's project may hold the same file, as may the user's own others.
    existing = Dataset.objects.filter(project_id=project_id, content_hash=content_hash).first()
    if existing is not None:
        raise DatasetFileError(
            f"This file was already uploaded as dataset '{existing.name}' (id {existing.pk})."
        )


def empty_dirs_remove(folder: Path) -> None:
    """The folder and its parent, each only if empty."""
    for path in (folder, folder.parent):
        try:
            path.rmdir()
        except OSError:
            return


def actor_name(user: Any) -> str:
    return user.get_username() if user is not None else "The system"


def _record_created(dataset: Dataset, *, verb: str, actor: Any) -> None:
    how = "imported" if verb == "dataset_imported" else "uploaded"
    activity_record(project=dataset.project_id, actor=actor, verb=verb, subject=dataset,
                    summary=f"{actor_name(actor)} {how} dataset “{dataset.name}” "
                            f"({dataset.row_count} rows)", name=dataset.name,
                    rows=dataset.row_count)


def _place(source: Path, target: Path, placed: list[Path]) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    source.replace(target)
    placed.append(target)
