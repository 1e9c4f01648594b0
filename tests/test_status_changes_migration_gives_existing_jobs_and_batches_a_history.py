"""The migration that adds the history gives the jobs and batches made before it what is known:
their creation (queued, by their creator) and the state they are in now with its reason, so a
job that failed before the upgrade and is resumed after it keeps that failure on its page."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("classification", "0009_project_required")]
AFTER = [("classification", "0010_statuschange")]


def _migrate(targets: list[tuple[str, str]]) -> Any:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return MigrationExecutor(connection).loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_existing_jobs_and_batches_get_their_creation_and_current_state() -> None:
    apps = _migrate(BEFORE)
    User = apps.get_model("auth", "User")
    Project = apps.get_model("projects", "Project")
    Dataset = apps.get_model("dataset_management", "Dataset")
    MLModel = apps.get_model("classification", "MLModel")
    TrainingJob = apps.get_model("classification", "TrainingJob")
    BatchJob = apps.get_model("classification", "BatchJob")

    alice = User.objects.create(username="alice")
    project = Project.objects.create(name="Alice's work", personal_for=alice)
    dataset = Dataset.objects.create(owner=alice, project=project, name="abstracts")
    model = MLModel.objects.create(owner=alice, project=project, dataset=dataset, name="m",
                                   model_type="tfidf_logreg")
    failed = TrainingJob.objects.create(ml_model=model, status="failed", reason="out of memory")
    waiting = TrainingJob.objects.create(ml_model=model, status="queued")
    batch = BatchJob.objects.create(owner=alice, project=project, ml_model=model,
                                    filename="a.csv", status="completed")

    apps = _migrate(AFTER)
    StatusChange = apps.get_model("classification", "StatusChange")

    def history(**subject: Any) -> list[tuple[str, str, str, int | None]]:
        return list(StatusChange.objects.filter(**subject).order_by("at", "id")
                    .values_list("source", "target", "reason", "actor_id"))

    assert history(job_id=failed.pk) == [
        ("", "queued", "", alice.pk), ("", "failed", "out of memory", None),
    ]
    assert history(job_id=waiting.pk) == [("", "queued", "", alice.pk)]
    assert history(batch_id=batch.pk) == [("", "queued", "", alice.pk), ("", "completed", "", None)]
    _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
