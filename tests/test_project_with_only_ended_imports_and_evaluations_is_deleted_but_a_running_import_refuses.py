"""A project whose datasets and models are gone may be deleted even though it still has the
records of its ended imports (they go with it) and had evaluations (they went with their
models). An import still queued or running refuses the deletion in words (it would delete the
row its worker writes to), until it ends; a dataset moved away takes its models'
evaluations with it, so they never hold the project it left."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.core.files import File

from classification.mlmodels.deletion import mlmodel_delete
from classification.models import EvaluationJob, MLModel
from dataset_management.imports import import_job_cancel, import_job_create
from dataset_management.models import Dataset, ImportJob
from dataset_management.services import dataset_delete, dataset_move
from projects import services as project_services
from projects.models import Project
from projects.services import ProjectError
from tests.import_support import import_run_last, imports_run_queued

pytestmark = pytest.mark.django_db

FORMATS = Path(__file__).resolve().parent / "fixtures" / "formats"


def queue(user: Any, project: Project) -> ImportJob:
    with (FORMATS / "comma.csv").open("rb") as handle:
        return import_job_create(owner=user, project=project, name="Small",
                                 uploaded_file=File(handle, name="comma.csv"))


def evaluation_make(model: MLModel, status: str) -> EvaluationJob:
    return EvaluationJob.objects.create(owner=model.owner, ml_model=model,
                                        project_id=model.project_id, filename="test.csv",
                                        status=status)


def test_ended_imports_and_evaluations_of_deleted_models_do_not_hold_the_project(
    user: Any, media_root: Path
) -> None:
    project = project_services.project_create(user=user, name="Review")
    queue(user, project)
    queue(user, project)  # the same bytes again: the worker that runs it second refuses them
    job, failed = imports_run_queued()
    assert (job.status, failed.status) == ("completed", "failed"), job.reason
    model = MLModel.objects.create(owner=user, project=project, dataset=job.dataset,
                                   name="TF-IDF", model_type="tfidf_logreg")
    evaluation_make(model, EvaluationJob.Status.COMPLETED)
    with pytest.raises(ProjectError, match=r"still holds 1 datasets, 1 models, "
                                           r"1 evaluation jobs; move or delete them first"):
        project_services.project_delete(user=user, project=project)

    mlmodel_delete(ml_model=model, actor=user)
    dataset_delete(dataset=job.dataset, user=user)
    assert project_services.project_holdings(project=project) == {}
    project_services.project_delete(user=user, project=project)
    assert not Project.objects.filter(pk=project.pk).exists()
    assert not ImportJob.objects.exists()  # the ended imports' records went with it
    assert not EvaluationJob.objects.exists()


def test_an_import_still_queued_or_running_refuses_the_deletion_until_it_ends(
    user: Any, media_root: Path
) -> None:
    project = project_services.project_create(user=user, name="Review")
    job = queue(user, project)
    refusal = ("The project still holds 1 imports still running; wait for what runs to end "
               "(or cancel it), and move or delete them first.")
    with pytest.raises(ProjectError) as refused:
        project_services.project_delete(user=user, project=project)
    assert refused.value.message == refusal
    ImportJob.objects.filter(pk=job.pk).update(status=ImportJob.Status.RUNNING)
    with pytest.raises(ProjectError, match="1 imports still running"):
        project_services.project_delete(user=user, project=project)
    assert ImportJob.objects.get(pk=job.pk).status == "running"  # nothing was deleted

    ImportJob.objects.filter(pk=job.pk).update(status=ImportJob.Status.QUEUED)
    assert import_job_cancel(user=user, job=job).status == "cancelled"
    project_services.project_delete(user=user, project=project)
    assert not ImportJob.objects.exists()


def test_a_moved_dataset_takes_its_models_evaluations_so_the_old_project_can_go(
    user: Any, media_root: Path
) -> None:
    old = project_services.project_create(user=user, name="Old")
    new = project_services.project_create(user=user, name="New")
    queue(user, old)
    dataset = import_run_last().dataset
    model = MLModel.objects.create(owner=user, project=old, dataset=dataset, name="TF-IDF",
                                   model_type="tfidf_logreg")
    evaluation = evaluation_make(model, EvaluationJob.Status.COMPLETED)
    dataset_move(user=user, dataset=dataset, project=new)
    assert EvaluationJob.objects.get(pk=evaluation.pk).project_id == new.pk
    project_services.project_delete(user=user, project=old)
    assert Dataset.objects.get(pk=dataset.pk).project_id == new.pk
    assert EvaluationJob.objects.filter(pk=evaluation.pk).exists()
