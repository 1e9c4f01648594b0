"""The services that train, search, combine, cancel, resume, delete, classify and review record
one activity line each in the project of what they acted on, naming who did it; and they refuse
(RoleRequired) a person whose role there is too low, so the page, the API and the command line
get the same answer."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile

from classification import services
from classification.batches import services as batch_services
from classification.jobs.ensembles import ensemble_create
from classification.jobs.searches import search_create
from classification.models import BatchJob, MLModel, TrainingJob
from classification.review import services as review_services
from classification.review.models import ReviewItem
from projects import policy
from projects.models import Activity, Role
from projects.services import member_set, project_personal
from tests.batch_support import completed_batch

pytestmark = pytest.mark.django_db


def person(owner: Any, name: str, role: str) -> Any:
    someone = get_user_model().objects.create_user(name, f"{name}@example.org", "pass-123-x")
    member_set(actor=owner, project=project_personal(user=owner), member=someone, role=role)
    return someone


def lines(verb: str) -> list[Activity]:
    return list(Activity.objects.filter(verb=verb))


def test_training_searching_combining_cancelling_resuming_and_deleting_are_recorded(
        user, rows, trained_model, tfidf_artifact, media_root) -> None:
    mona = person(user, "mona", Role.MAINTAINER)
    dataset = trained_model.dataset
    job = services.training_job_create(owner=mona, dataset=dataset, model_type="tfidf_logreg",
                                       name="Mona's model", config={})
    search_create(owner=mona, dataset=dataset, time_budget_minutes=1.0,
                  candidates=["tfidf_logreg"], name="Mona's search")
    twin = rows.model(user, dataset, name="Twin", artifact_path=tfidf_artifact["path"],
                      label_names=tfidf_artifact["labels"])
    ensemble_create(owner=mona, member_ids=[trained_model.pk, twin.pk], name="Pair")
    services.training_job_cancel(job=job, actor=mona)
    services.training_job_resume(job=job, actor=mona)
    services.training_job_cancel(job=job, actor=mona)
    services.mlmodel_delete(ml_model=MLModel.objects.get(pk=job.ml_model_id), actor=mona)

    project = project_personal(user=user)
    for verb, words in (("training_started", "mona started training “Mona's model”"),
                        ("search_started", "mona started the search “Mona's search”"),
                        ("ensemble_created", "mona combined 2 models into the ensemble “Pair”"),
                        ("job_resumed", "mona resumed job"),
                        ("model_deleted", "mona deleted the model “Mona's model”")):
        [line] = lines(verb)
        assert (line.project_id, line.actor_id) == (project.pk, mona.pk), verb
        assert words in line.summary, (verb, line.summary)
    assert len(lines("job_cancelled")) == 2


def test_batches_and_reviews_are_recorded_one_line_per_decision(
        user, trained_model, media_root) -> None:
    rita = person(user, "rita", Role.REVIEWER)
    mona = person(user, "mona", Role.MAINTAINER)
    labels = trained_model.label_names
    queued = batch_services.batch_job_create(
        owner=rita, ml_model=trained_model,
        uploaded_file=SimpleUploadedFile("queued.csv", b"title;abstract\nHeart;Failure\n"))
    batch_services.batch_job_cancel(batch=queued, actor=mona)
    batch_services.batch_job_delete(batch=queued, actor=mona)
    done = completed_batch(user, trained_model, [
        (1, "Statins after infarction", [labels[0]], *[0.5] * len(labels)),
        (2, "Migraine and stroke", [labels[0]], *[0.5] * len(labels)),
    ], labels)
    review_services.review_items_ensure(batch=done)
    for row, chosen in ((1, labels[0]), (2, labels[1])):
        review_services.review_item_correct(item=ReviewItem.objects.get(batch=done, row=row),
                                            reviewer=rita, labels=[chosen])
    round_ = review_services.review_retrain_start(batch=done, user=mona,
                                                  include_training_data=False)

    assert [a.actor_id for a in lines("batch_created")] == [rita.pk]
    assert "rita started classifying “queued.csv”" in lines("batch_created")[0].summary
    assert [a.actor_id for a in lines("batch_cancelled")] == [mona.pk]
    assert [a.actor_id for a in lines("batch_deleted")] == [mona.pk]
    decisions = sorted(lines("review_decision"), key=lambda a: a.detail["row"])
    assert [(a.actor_id, a.detail["row"]) for a in decisions] == [(rita.pk, 1), (rita.pk, 2)]
    assert decisions[0].summary.startswith(f"rita confirmed {labels[0]} for row 1")
    assert decisions[1].summary.startswith("rita corrected row 2 “Migraine and stroke”")
    [retrain] = lines("review_retrain")
    assert retrain.actor_id == mona.pk
    assert "2 reviewed article(s)" in retrain.summary
    assert round_.dataset.project_id == done.project_id
    assert round_.training_job.ml_model.project_id == done.project_id


def test_a_role_below_the_action_is_refused_by_the_service_itself(
        user, other_user, rows, trained_model, media_root) -> None:
    victor = person(user, "victor", Role.VIEWER)
    rita = person(user, "rita", Role.REVIEWER)
    job = rows.job(trained_model, status=TrainingJob.Status.FAILED)
    batch = completed_batch(user, trained_model, [(1, "A", [], 0.5, 0.5)],
                            trained_model.label_names[:2])
    upload = SimpleUploadedFile("x.csv", b"title\nHeart\n")
    refusals = {
        "train": lambda: services.training_job_create(
            owner=rita, dataset=trained_model.dataset, model_type="tfidf_logreg", name="",
            config={}),
        "classify": lambda: batch_services.batch_job_create(
            owner=victor, ml_model=trained_model, uploaded_file=upload),
        "classify, not a member": lambda: batch_services.batch_job_create(
            owner=other_user, ml_model=trained_model, uploaded_file=upload),
        "cancel": lambda: services.training_job_cancel(job=job, actor=rita),
        "resume": lambda: services.training_job_resume(job=job, actor=rita),
        "delete": lambda: services.mlmodel_delete(ml_model=trained_model, actor=rita),
        "delete batch": lambda: batch_services.batch_job_delete(batch=batch, actor=rita),
        "review": lambda: review_services.review_dataset_create(batch=batch, user=victor),
        "retrain": lambda: review_services.review_retrain_start(batch=batch, user=rita),
    }
    for name, call in refusals.items():
        try:
            call()
        except policy.RoleRequired:
            continue
        pytest.fail(f"{name} was not refused")
    job.refresh_from_db()
    assert (job.status, job.attempt) == (TrainingJob.Status.FAILED, 1)
    assert MLModel.objects.filter(pk=trained_model.pk).exists()
    assert BatchJob.objects.count() == 1
    assert not Activity.objects.exclude(verb__startswith="member").exists()
