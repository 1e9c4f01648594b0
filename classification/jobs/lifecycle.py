"""Job lifecycle writes: create, pick the job a delivery should run, claim, finish, cancel, resume.

Every status change goes through ``TrainingJob.objects.transition`` (one conditional UPDATE), so
a duplicate delivery, a second worker or a late watchdog that lost a race changes nothing.
"""

from __future__ import annotations

import logging
import os
import uuid
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from classification import ml_models, paths
from classification.jobs import adapt_encoders, routing
from classification.jobs.resume_notes import training_job_resume_words
from classification.jobs.self_training import self_training_sources_require
from classification.mlmodels.searches import SEARCH, search_adapted_plan, search_candidates_clean
from classification.model_paths import model_path_problem
from classification.models import MLModel, TrainingJob
from core import processes, queueing
from projects import policy
from projects.models import Activity
from projects.services import activity_record

logger = logging.getLogger(__name__)

S = TrainingJob.Status
# The Celery task a training message names (classification/tasks.py registers it under this).
TRAINING_TASK = "classification.tasks.start_model_training"
# What each final job status means for the model it was training.
MODEL_STATUS_AFTER = {
    S.FAILED: MLModel.Status.FAILED,
    S.STALLED: MLModel.Status.PENDING,
    S.CANCELLED: MLModel.Status.PENDING,
}


def untrained(ml_model_id: int | None) -> Any:
    """The model's row unless it is trained. Only a search cancelled with its best model kept
    has a trained model and a resumable job; resuming it leaves that model usable until the
    search finishes and replaces it."""
    return MLModel.objects.filter(pk=ml_model_id).exclude(status=MLModel.Status.TRAINED)


def job_config(*, ml_model: MLModel, overrides: dict[str, Any] | None) -> dict[str, Any]:
    """The model's parameters overlaid with this run's settings; raises ValueError if unusable."""
    config = {**(ml_model.parameters or {}), **(overrides or {})}
    spec = ml_models.REGISTRY.get(ml_model.model_type)
    given = {key for key in config if ml_models.ALIASES.get(key, key) == "learning_rate"}
    if spec is not None and spec.learning_rate is not None and not given:
        # Written into the job, so its page shows the step size it really trained with.
        config["learning_rate"] = spec.learning_rate
    try:
        ml_models.TrainConfig.from_dict(config)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"Invalid training settings {config!r}: {exc}") from exc
    return config


CUSTOM = "custom"
CUSTOM_NEEDS_FOLDER = "The custom type needs a local model folder."
CUSTOM_STAFF_ONLY = ("The custom type trains from a folder on the server, which only staff "
                     "may give.")


def training_model_path_errors(*, model_type: str, config: dict[str, Any] | None,
                               staff: bool = True) -> dict[str, list[str]]:
    """{"model_path": [why]} when the folder to train from is missing or unusable, else {}.

    The custom type trains only from a folder (model_path_problem says which folders are
    usable); `staff` says whether the person could have named one, which changes the words.
    The form asks this too, to show the refusal on its field before a job is created.
    """
    model_path = str((config or {}).get("model_path") or "")
    if model_type == CUSTOM and not model_path:
        return {"model_path": [CUSTOM_NEEDS_FOLDER if staff else CUSTOM_STAFF_ONLY]}
    problem = model_path_problem(model_path)
    return {"model_path": [problem]} if problem else {}


def _model_path_require(*, model_type: str, config: dict[str, Any], staff: bool = True) -> None:
    if errors := training_model_path_errors(model_type=model_type, config=config, staff=staff):
        raise ml_models.TrainConfigError(errors)


def mlmodel_default_name(*, dataset: Any, model_type: str) -> str:
    """The name a model gets when the person gives none, at every door."""
    return f"{dataset.name} · {model_type}"[:200]


def _total_epochs(config: dict[str, Any]) -> int:
    return int(ml_models.TrainConfig.from_dict(config).epochs)


def _enqueue(*, ml_model_id: int, job_id: int, task_id: str, queue: str,
             created: bool = False) -> None:
    """Send the training message to `queue` (routing.training_queue_choose) once the job row
    commits.

    If the broker cannot take it, QueueUnavailable reaches the caller (a 503 in the web and the
    API, a CommandError in the commands), whose words are "nothing was started": a job just
    `created` goes with its model and its activity line, leaving no row; a resumed one ends
    failed again with the reason (no queued row is left for a message that never existed).
    """

    def fail_unsent(reason: str) -> None:
        if created:
            Activity.objects.filter(subject_type="mlmodel", subject_id=str(ml_model_id)).delete()
            MLModel.objects.filter(pk=ml_model_id).delete()  # its job with it (cascade)
            return
        training_job_fail_to_start(job_id=job_id, reason=reason)

    queueing.task_send_on_commit(
        name=TRAINING_TASK,
        args=(ml_model_id,),
        kwargs={"job_id": job_id},
        task_id=task_id,
        queue=queue,
        on_unreachable=fail_unsent,
    )


def _enqueue_on_commit(job: TrainingJob, *, created: bool = False) -> None:
    _enqueue(ml_model_id=job.ml_model_id, job_id=job.pk, task_id=job.celery_task_id,
             queue=job.queue, created=created)


def training_job_create(
    *, owner: Any, dataset: Any, model_type: str, name: str, config: dict[str, Any] | None,
    staff: bool | None = None, internal: dict[str, Any] | None = None,
    verb: str = "training_started", summary: str = "",
) -> TrainingJob:
    """Create the MLModel and its queued TrainingJob; the task is sent once this commits.

    Every door (form, API, CLI, review retrain) comes through here, so the settings schema and
    the model folder rule are enforced here too: TrainConfigError (a ValueError) names each bad
    field (model_path for a custom model without a usable folder). An empty `name` becomes
    mlmodel_default_name. `staff` says whether the caller may name a folder on the server; by
    default the owner's own flag. `internal` holds settings MedLitBot's own services set (an
    ensemble's members), never a person.

    `owner` is who asks: recorded as the model's creator, and RoleRequired unless they may train
    (ENSEMBLE for an ensemble) in the dataset's project, which the model joins. None is an
    operator's shell, acting for the dataset's creator. `verb` and `summary` are the activity
    line (search_started, ensemble_created and review_retrain come through here too).
    """
    config = _config_checked(config=config, model_type=model_type, internal=internal,
                             staff=getattr(owner, "is_staff", False) if staff is None else staff)
    _dataset_checked(owner=owner, dataset=dataset, model_type=model_type, config=config)
    with transaction.atomic():
        ml_model = MLModel(
            owner=owner or dataset.owner,
            project_id=dataset.project_id,
            name=name or mlmodel_default_name(dataset=dataset, model_type=model_type),
            model_type=model_type,
            dataset=dataset,
            parameters=dict(config or {}),
            label_names=list(dataset.label_names),
            is_multilabel=dataset.is_multilabel,
        )
        merged = job_config(ml_model=ml_model, overrides=None)
        route = routing.training_queue_choose(config=merged)
        ml_model.save()
        # The task id is chosen here so the job row names its message before it is sent.
        job = TrainingJob.objects.create(
            ml_model=ml_model,
            config=merged,
            total_epochs=_total_epochs(merged),
            celery_task_id=str(uuid.uuid4()),
            queue=route.queue,
            log_tail=route.note,
        )
        _training_record(job=job, actor=owner, verb=verb, summary=summary)
        _enqueue_on_commit(job, created=True)
    return job


def _dataset_checked(*, owner: Any, dataset: Any, model_type: str,
                     config: dict[str, Any]) -> None:
    """The dataset may be trained on, by `owner`, with these sources: RoleRequired or
    ValueError. A search gains the encoder adapted on this dataset (config, in place)."""
    if dataset is None:
        raise ValueError("Choose a dataset to train on")
    if owner is not None:
        action = policy.Action.ENSEMBLE if model_type == "ensemble" else policy.Action.TRAIN
        policy.require(user=owner, action=action, obj=dataset)
        if model_type == SEARCH:
            # Every door (page, API, command line) gets the encoder adapted on this dataset as
            # one more kind; a search that already has it (search_create) is left as it is.
            config.update(search_adapted_plan(owner=owner, dataset=dataset,
                                              candidates=config["search_candidates"]))
    adapt_encoders.adapted_encoder_require(owner=owner, model_type=model_type, config=config)
    self_training_sources_require(dataset=dataset, model_type=model_type, config=config)
    if not dataset.is_trainable:
        raise ValueError(
            f"Dataset {dataset.name!r} has {len(dataset.label_names)} label(s); "
            "training needs a labelled dataset with at least two labels"
        )


def _config_checked(*, config: dict[str, Any] | None, model_type: str, staff: bool,
                    internal: dict[str, Any] | None) -> dict[str, Any]:
    """The person's settings, cleaned by the schema, with MedLitBot's own (`internal`) on top."""
    config = ml_models.training_config_clean(config, staff=staff,
                                             extra_keys=frozenset({"preset"}))
    if model_type not in ml_models.REGISTRY:
        known = ", ".join(sorted(k for k, s in ml_models.REGISTRY.items() if s.offered))
        raise ValueError(f"Unknown model type {model_type!r}; choose one of {known}")
    if model_type == "ensemble" and not internal:
        raise ValueError("An ensemble is not trained from a dataset: combine trained models "
                         "on the Compare page or with POST /api/models/ensemble/.")
    _model_path_require(model_type=model_type, config=config, staff=staff)
    if model_type == SEARCH:
        config["search_candidates"] = search_candidates_clean(config.get("search_candidates"))
    return {**config, **(internal or {})}


def _training_record(*, job: TrainingJob, actor: Any, verb: str, summary: str) -> None:
    ml_model = job.ml_model
    if ml_model.model_type == "search" and verb == "training_started":
        verb = "search_started"  # the command line starts searches as `--type search`
    dataset_name = ml_model.dataset.name if ml_model.dataset else "a deleted dataset"
    activity_record(
        project=ml_model.project_id, actor=actor, verb=verb, subject=ml_model,
        summary=summary or f"{_who(actor)} started training “{ml_model.name}” "
                           f"({ml_model.model_type}) on dataset “{dataset_name}”",
        model=ml_model.name, model_type=ml_model.model_type, job=job.pk,
    )


def _who(user: Any) -> str:
    return user.get_username() if user is not None else "The system"


def _job_name(job: TrainingJob) -> str:
    return f"job {job.pk} of “{job.ml_model.name}”"


def training_job_for_delivery(
    *, model_id: int, config: dict[str, Any] | None, job_id: int | None, task_id: str | None
) -> TrainingJob | None:
    """The job a start_model_training delivery should run, creating one for the seed's call.

    A redelivered message carries the same task id, so it finds the job it created the first
    time, and the claim (queued -> running) then turns the duplicate away.
    """
    if job_id is not None:
        return TrainingJob.objects.select_related("ml_model").filter(pk=job_id).first()
    with transaction.atomic():
        # Serialises two deliveries for one model (a no-op on SQLite, whose IMMEDIATE
        # transactions already serialise writers).
        ml_model = MLModel.objects.select_for_update().filter(pk=model_id).first()
        if ml_model is None:
            logger.warning("start_model_training: model %s does not exist", model_id)
            return None
        jobs = TrainingJob.objects.filter(ml_model=ml_model)
        if task_id and (job := jobs.filter(celery_task_id=task_id).first()):
            return job
        if job := jobs.filter(status=S.QUEUED).order_by("created_at").first():
            if config:
                job.config = job_config(ml_model=ml_model, overrides={**job.config, **config})
                job.total_epochs = _total_epochs(job.config)
                job.save(update_fields=["config", "total_epochs", "updated_at"])
            return job
        if running := jobs.filter(status=S.RUNNING).first():
            logger.warning("model %s is already training in job %s", model_id, running.pk)
            return None
        try:
            merged = job_config(ml_model=ml_model, overrides=config)
            _model_path_require(model_type=ml_model.model_type, config=merged)
        except ValueError as exc:
            merged, problem = dict(config or {}), str(exc)
        else:
            problem = ""
        job = TrainingJob.objects.create(
            ml_model=ml_model,
            config=merged,
            total_epochs=0 if problem else _total_epochs(merged),
            celery_task_id=task_id or "",
        )
        if problem:
            training_job_fail_to_start(job=job, reason=problem)
    return job


def startup_problem(job: TrainingJob) -> str:
    """Why this job cannot even start, in plain words; '' when it can."""
    ml_model = job.ml_model
    if ml_model.model_type not in ml_models.REGISTRY:
        known = ", ".join(sorted(ml_models.REGISTRY))
        return f"Unknown model type {ml_model.model_type!r}; choose one of {known}"
    dataset = ml_model.dataset
    if dataset is None:
        return "The dataset this model was to be trained on has been deleted"
    # An adapt job reads texts, not labels: an unlabelled dataset serves (jobs/adapt.py).
    if not dataset.is_trainable and ml_model.model_type != adapt_encoders.ADAPT:
        return (
            f"Dataset {dataset.name!r} has {len(dataset.label_names)} label(s); "
            "training needs at least two"
        )
    return ""


def training_job_fail_to_start(
    *, job: TrainingJob | None = None, job_id: int | None = None, reason: str
) -> bool:
    """queued -> failed, exactly once: the job can never start (or its message was lost)."""
    pk = job.pk if job is not None else job_id
    with transaction.atomic():
        ok = TrainingJob.objects.transition(
            pk, source=S.QUEUED, target=S.FAILED, reason=reason, finished_at=timezone.now()
        )
        if ok:
            model_id = TrainingJob.objects.filter(pk=pk).values_list("ml_model_id", flat=True)
            untrained(model_id.first()).update(status=MLModel.Status.FAILED)
    return ok


def training_job_claim(*, job: TrainingJob) -> bool:
    """queued -> running, exactly once; records where the job runs."""
    now = timezone.now()
    with transaction.atomic():
        ok = TrainingJob.objects.transition(
            job.pk,
            source=S.QUEUED,
            target=S.RUNNING,
            phase=TrainingJob.Phase.PREPARING,
            started_at=now,
            heartbeat_at=now,
            progress_at=now,
            worker_host=processes.hostname(),
            worker_pid=os.getpid(),
            child_pid=None,
            finished_at=None,
            reason="",
        )
        if ok:
            untrained(job.ml_model_id).update(status=MLModel.Status.TRAINING, updated_at=now)
    return ok


def training_job_finish(*, job_id: int, target: str, reason: str, **fields: Any) -> bool:
    """running -> failed | stalled | cancelled, with the reason; False if someone else won."""
    now = timezone.now()
    with transaction.atomic():
        ok = TrainingJob.objects.transition(
            job_id, source=S.RUNNING, target=target, reason=reason[:4000], finished_at=now,
            eta_seconds=None, **fields,
        )
        if ok:
            ml_model_id = TrainingJob.objects.filter(pk=job_id).values_list(
                "ml_model_id", flat=True
            ).first()
            untrained(ml_model_id).update(status=MODEL_STATUS_AFTER[target], updated_at=now)
    if ok:
        logger.info("job %s -> %s: %s", job_id, target, reason)
    return ok


def training_job_cancel(*, job: TrainingJob, actor: Any = None) -> TrainingJob:
    """Cancel: a queued job ends now; a running one stops at its next step (or is killed).

    `actor` (the user asking) is recorded in the job's history; a running job's cancelled row is
    written by its worker when it stops, so that one is the system's. RoleRequired unless
    `actor` may cancel in the model's project (None: the system or an operator's shell)."""
    if actor is not None:
        policy.require(user=actor, action=policy.Action.CANCEL, obj=job)
    now = timezone.now()
    with transaction.atomic():
        if TrainingJob.objects.transition(
            job.pk, source=S.QUEUED, target=S.CANCELLED, cancel_requested=True,
            reason="Cancelled before a worker started it", finished_at=now, actor=actor,
        ):
            untrained(job.ml_model_id).update(status=MLModel.Status.PENDING)
            asked = True
        else:
            asked = bool(TrainingJob.objects.filter(pk=job.pk, status=S.RUNNING).update(
                cancel_requested=True, updated_at=now
            ))
        if asked:  # a job that had already ended was not cancelled by anyone
            activity_record(project=job.ml_model.project_id, actor=actor, verb="job_cancelled",
                            subject=job, summary=f"{_who(actor)} cancelled {_job_name(job)}",
                            model=job.ml_model.name)
    job.refresh_from_db()
    return job


def training_job_resume(*, job: TrainingJob, actor: Any = None, reason: str = "") -> TrainingJob:
    """failed | stalled | cancelled -> queued, attempt + 1, from the latest checkpoint if any.

    The job's reason becomes `reason` (why the system resumed it; a worker's claim clears it);
    the history (StatusChange) keeps the earlier ones, and records `actor` (the user asking) as
    who resumed it. RoleRequired unless `actor` may resume in the model's project (None: the
    system or an operator's shell)."""
    if actor is not None:
        policy.require(user=actor, action=policy.Action.RESUME, obj=job)
    checkpoint = paths.latest_checkpoint(paths.job_output_dir(job.pk))
    note = training_job_resume_words(job_id=job.pk).log  # the reason and banner word it alike
    # Routed again: the GPU worker the job first waited for may be gone, or one may have come.
    route = routing.training_queue_choose(config=job.config)
    log_tail = "\n".join([*job.log_tail.splitlines()[-40:], note, route.note])
    # The attempt that ended ran from its claim to its end: a search's budget counts it.
    # Read from the row: the caller's copy may predate that end.
    began, ended = TrainingJob.objects.filter(pk=job.pk).values_list(
        "started_at", "finished_at").first() or (None, None)
    ran = (ended - began).total_seconds() if began and ended and ended > began else 0.0
    with transaction.atomic():
        ok = TrainingJob.objects.transition(
            job.pk,
            source=list(TrainingJob.RESUMABLE_STATUSES),
            target=S.QUEUED,
            actor=actor,
            attempt=F("attempt") + 1,
            spent_seconds=F("spent_seconds") + ran,
            cancel_requested=False,
            reason=reason,
            phase=TrainingJob.Phase.QUEUED,
            checkpoint_path=checkpoint or "",
            celery_task_id=str(uuid.uuid4()),
            heartbeat_at=None,
            eta_seconds=None,
            finished_at=None,
            child_pid=None,
            log_tail=log_tail,
            queue=route.queue,
        )
        if not ok:
            job.refresh_from_db()
            raise ValueError(
                f"Job {job.pk} is {job.status}: "
                "only failed, stalled or cancelled jobs can be resumed"
            )
        untrained(job.ml_model_id).update(status=MLModel.Status.PENDING)
        job.refresh_from_db()
        activity_record(project=job.ml_model.project_id, actor=actor, verb="job_resumed",
                        subject=job, summary=f"{_who(actor)} resumed {_job_name(job)} "
                        f"(attempt {job.attempt})", model=job.ml_model.name, attempt=job.attempt)
        _enqueue_on_commit(job)
    return job
