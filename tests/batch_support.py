"""Helpers shared by the batch tests: an inference worker like start_m1.sh's, waiting, reading."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files import File

from classification.batches import storage
from classification.models import BatchJob, MLModel
from dataset_management.export import csv_safe_cell
from tests.job_support import fast_env, wait_for

ROOT = Path(__file__).resolve().parent.parent
DEMO_SLICE = ROOT / "tests" / "fixtures" / "demo_slice.csv"
DEMO_CSV = ROOT / "demo_data" / "medlit_challenge.csv"
ENDED = {"completed", "failed", "cancelled"}


def start_inference_worker(start_worker: Callable[..., Any], **env: str) -> Any:
    """A threaded worker on the inference queue only, sharing this test's folders."""
    return start_worker(queues=(settings.QUEUE_INFERENCE,), pool="threads", concurrency=1,
                        **fast_env(**env))


def create_batch(*, owner: Any, ml_model: MLModel, path: Path) -> BatchJob:
    from classification.batches import services

    with path.open("rb") as handle:
        return services.batch_job_create(owner=owner, ml_model=ml_model,
                                         uploaded_file=File(handle, name=path.name))


def wait_for_batch(batch: BatchJob, statuses: set[str] = ENDED, timeout: float = 90) -> BatchJob:
    def check() -> BatchJob | None:
        batch.refresh_from_db()
        return batch if batch.status in statuses else None

    try:
        return wait_for(check, timeout, f"batch {batch.pk.hex} to become one of {statuses}")
    except AssertionError:
        batch.refresh_from_db()
        raise AssertionError(
            f"batch {batch.pk.hex} is {batch.status} at {batch.processed}/{batch.total} "
            f"({batch.reason!r})"
        ) from None


def input_rows(path: Path) -> list[dict[str, str]]:
    """The demo CSV's rows as the file holds them (semicolon-separated, BOM)."""
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle, delimiter=";"))


def csv_rows(content: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(content.decode("utf-8-sig"))))


def batch_files(batch: BatchJob) -> set[str]:
    folder = Path(settings.MEDIA_ROOT) / "batches" / str(batch.owner_id) / batch.pk.hex
    return {p.name for p in folder.iterdir()} if folder.is_dir() else set()


def completed_batch(owner: Any, model: Any, rows: list[tuple], labels: list[str]) -> BatchJob:
    """A completed batch whose result CSV is written the way the runner writes it."""
    batch = BatchJob.objects.create(owner=owner, ml_model=model, filename="articles.csv",
                                    status=BatchJob.Status.COMPLETED, total=len(rows) + 1,
                                    processed=len(rows) + 1, skipped=1)
    folder = storage.batch_folder(owner_id=owner.pk, batch_id=batch.pk)
    folder.mkdir(parents=True)
    path = folder / storage.RESULT_NAME
    with path.open("w", encoding="utf-8-sig", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["row", "title", "abstract", "predicted_labels",
                         *[f"p_{name}" for name in labels], "note"])
        for row, title, predicted, *probabilities in rows:
            writer.writerow([csv_safe_cell(c) for c in (
                row, title, f"Abstract of {title}", predicted,
                *[f"{p:.4f}" for p in probabilities], "")])
        writer.writerow(["4", "", "", "", *[""] * len(labels), "skipped: no text"])
    batch.result_path = storage.relative(path)
    batch.save(update_fields=["result_path"])
    return batch
