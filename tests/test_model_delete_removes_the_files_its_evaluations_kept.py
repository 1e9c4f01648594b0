"""An evaluation keeps its uploaded file for a day after it ends (to evaluate again with other
columns). Deleting the model deletes its evaluations' rows with it, so their files must go with
them too: the maintenance sweep that purges kept files walks the rows, and would never find them
again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse

from classification import services
from classification.models import EvaluationJob, MLModel
from tests.batch_support import DEMO_SLICE

pytestmark = pytest.mark.django_db


def files_under(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_the_kept_files_of_a_deleted_models_evaluations_are_removed(
    alice_client: Any, user: Any, trained_model: MLModel, media_root: Path,
    django_capture_on_commit_callbacks: Any,
) -> None:
    done = services.evaluation_job_create(owner=user, ml_model=trained_model,
                                          source=DEMO_SLICE, filename="labelled.csv")
    assert services.evaluation_job_run(job_id=done.pk) == EvaluationJob.Status.COMPLETED
    waiting = services.evaluation_job_create(owner=user, ml_model=trained_model,
                                             source=DEMO_SLICE, filename="waiting.csv")
    # A queued evaluation refuses the deletion; cancelled, it keeps its file as a finished one.
    services.evaluation_job_cancel(job=waiting, actor=user)
    kept = files_under(media_root / "evaluations")
    assert len(kept) == 2, kept

    with django_capture_on_commit_callbacks(execute=True):
        response = alice_client.post(reverse("classification:model_delete",
                                             args=[trained_model.pk]))

    assert response.status_code == 302
    assert not EvaluationJob.objects.exists()
    assert files_under(media_root / "evaluations") == []
