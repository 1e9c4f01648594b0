"""What the spawned child does: load data, plan the device, fit, evaluate, save, verify.

Runs after django.setup() in the child. The job row is the only channel back to the worker:
progress and heartbeats while it runs, and the final transition when it ends by itself.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import shutil
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from classification import ml_models, paths
from classification.engine.metadata import metadata_summary
from classification.jobs import adapt_encoders, baseline_check, checkpoint_sync, lifecycle
from classification.jobs.progress import FINAL_TEST, VERIFYING, Heartbeat, ProgressWriter
from classification.jobs.resume_notes import training_job_resume_note
from classification.jobs.self_training import self_training_rounds_run
from classification.jobs.training_metadata import splits_with_metadata
from classification.mlmodels import searches
from classification.mlmodels.deletion import artifact_tree_forget
from classification.models import MLModel, TrainingJob
from core import filestore

logger = logging.getLogger(__name__)

S = TrainingJob.Status
P = TrainingJob.Phase
TRACEBACK_LINES = 12


def load_split(dataset: Any, split: str) -> ml_models.TextData:
    """One split of a dataset as TextData (the ingestion selector, or its Parquet file)."""
    try:
        from dataset_management.selectors import dataset_split_examples
    except ImportError:
        dataset_split_examples = None
    if dataset_split_examples is not None:
        return dataset_split_examples(dataset=dataset, split=split)
    import pyarrow.parquet as pq

    table = pq.read_table(filestore.file_local(name=dataset.rows_path))
    rows = [r for r in table.to_pylist() if r.get("split") == split]
    return ml_models.TextData(
        texts=[r["text"] for r in rows], labels=[list(r.get("labels") or []) for r in rows]
    )


def _jsonable(value: Any) -> Any:
    def scalar(v: Any) -> Any:
        return v.item() if hasattr(v, "item") else str(v)

    return json.loads(json.dumps(value, default=scalar))


def short_traceback(exc: BaseException) -> str:
    lines = traceback.format_exception(exc)
    text = "".join(lines).rstrip().splitlines()
    head = f"{type(exc).__name__}: {exc}".splitlines()[0][:500]
    return f"Training failed with {head}\n" + "\n".join(text[-TRACEBACK_LINES:])


def build_config(job: TrainingJob, writer: ProgressWriter) -> ml_models.TrainConfig:
    dataset = job.ml_model.dataset
    config = ml_models.TrainConfig.from_dict(job.config)
    config.label_names = list(dataset.label_names)
    config.multi_label = bool(dataset.is_multilabel)
    output_dir = paths.job_output_dir(job.pk)
    output_dir.mkdir(parents=True, exist_ok=True)
    config.output_dir = str(output_dir)
    # What the server may do is the deployment's to say, never a job's (schema.DEPLOYMENT).
    config.allow_download = bool(settings.ALLOW_MODEL_DOWNLOAD)
    config.download_timeout = float(settings.MODEL_DOWNLOAD_TIMEOUT)
    config.model_dir = str(settings.MEDLITBOT_MODEL_DIR)
    config.embedding_cache_dir = str(settings.EMBEDDING_CACHE_DIR)
    config.embedding_cache_mb = int(settings.EMBEDDING_CACHE_MB)
    member_ids = job.ml_model.parameters.get("member_ids")
    if job.ml_model.model_type == "ensemble" and member_ids:
        # The members as this node has them: the paths the web saw may not exist here.
        config.member_paths = _member_paths(member_ids)
    if job.ml_model.model_type == adapt_encoders.ADAPTED:
        # The adapted encoder's folder as this node has it (jobs/adapt_encoders.py).
        config.model_path = adapt_encoders.adapted_encoder_path(
            encoder_model_id=config.encoder_model_id)
    if job.ml_model.model_type == searches.SEARCH:
        searches.search_config_apply(config=config, job=job)
    if job.attempt > 1 and (fetched := checkpoint_sync.checkpoint_restore(
            job=job, output_dir=output_dir)):
        writer.line(f"{fetched} fetched from the shared storage (saved by another node)")
    checkpoint = paths.latest_checkpoint(output_dir) if job.attempt > 1 else None
    config.resume_from_checkpoint = checkpoint
    if job.attempt > 1:
        writer.line(
            f"attempt {job.attempt}: resuming from {os.path.basename(checkpoint)}"
            if checkpoint
            else f"attempt {job.attempt}: no checkpoint, training from scratch"
        )
    if checkpoint and job.total_steps:
        writer.start_at_checkpoint(
            step=paths.checkpoint_step(os.path.basename(checkpoint)) or 0,
            total_steps=job.total_steps,
        )
    return config


def _member_paths(member_ids: list[int]) -> list[str]:
    from classification.selectors import mlmodel_artifact_dir

    found = {m.pk: m for m in MLModel.objects.filter(pk__in=member_ids)}
    folders = [mlmodel_artifact_dir(ml_model=found[i]) if i in found else None
               for i in member_ids]
    if any(folder is None for folder in folders):
        raise RuntimeError("A member model's files are gone; the ensemble cannot be built.")
    return [str(folder) for folder in folders]


def needs_no_torch(model_type: str, config: ml_models.TrainConfig) -> bool:
    """A TF-IDF job, or a search over TF-IDF kinds only: scikit-learn alone, CPU only."""
    kinds = config.search_candidates if model_type == searches.SEARCH else [model_type]
    return bool(kinds) and all(ml_models.get_spec(k).kind == "baseline" for k in kinds)


def needs_trainer(model_type: str, config: ml_models.TrainConfig) -> bool:
    """Whether a transformer is fine-tuned (the model, or one of a search's candidates)."""
    kinds = (config.search_candidates if model_type == searches.SEARCH else [model_type]) or [
        model_type]
    return any(ml_models.get_spec(k).kind not in ("baseline", "embedding") for k in kinds)


class StopBeforeEnd(Exception):
    """A cancel seen outside the engine's fit: before it starts, before the test split, the save."""


def stop_if_asked(writer: ProgressWriter) -> None:
    if writer.should_stop():
        raise StopBeforeEnd()


def stopped_reason(writer: ProgressWriter, *, job_id: int, saved: str | None) -> tuple[str, str]:
    """The cancelled job's reason and the checkpoint it keeps, as found on disk."""
    if writer.total_steps:
        where = (
            f"at epoch {writer.epoch:.2f} of {writer.total_epochs}, "
            f"step {writer.step} of {writer.total_steps}"
        )
    else:
        where = f"during {writer.phase.replace('_', ' ')}"
    newest = paths.latest_checkpoint(paths.job_output_dir(job_id)) or ""
    name = os.path.basename(newest)
    if saved and newest and os.path.basename(saved) == name:
        # "checkpoint saved" is what the job page and the tests look for; the name is the truth.
        return (
            f"Cancelled on request {where}; checkpoint saved: {name}, resume continues from it",
            newest,
        )
    return f"Cancelled on request {where}; {training_job_resume_note(job_id=job_id)}", newest


def complete(job: TrainingJob, *, clf: Any, artifact: Path, metrics: dict[str, Any],
             kept_reason: str = "", digest: str = "") -> bool:
    """running -> completed, and the model trained with this artifact. With `kept_reason`,
    running -> cancelled instead, the model still trained: a search stopped on request keeps
    the best model it found (and Resume continues the search)."""
    from classification.engine.artifacts import library_versions

    plan = clf.device_plan.as_dict() if getattr(clf, "device_plan", None) else {}
    now = timezone.now()
    replaced = MLModel.objects.filter(pk=job.ml_model_id).values_list(
        "artifact_digest", flat=True).first()
    ending = ({"target": S.CANCELLED, "reason": kept_reason} if kept_reason else
              {"target": S.COMPLETED, "reason": "", "progress_percentage": 100.0})
    with transaction.atomic():
        ok = TrainingJob.objects.transition(
            job.pk, source=S.RUNNING, phase=P.DONE, eta_seconds=0.0, finished_at=now, **ending,
        )
        if ok:
            MLModel.objects.filter(pk=job.ml_model_id).update(
                status=MLModel.Status.TRAINED,
                metrics=metrics,
                artifact_path=str(artifact),
                artifact_digest=digest,
                device_used=str(plan.get("device", "cpu")),
                device_plan=plan,
                library_versions=library_versions(),
                label_names=list(clf.label_names),
                is_multilabel=bool(clf.multi_label),
                trained_at=now,
                updated_at=now,
            )
    if ok and replaced and replaced != digest:
        # A resumed search's earlier best: no row names it any more.
        artifact_tree_forget(digest=replaced)
    return ok


def kept_search_reason(stopped: str, metrics: dict[str, Any], *, job_id: int) -> str:
    winner = searches.search_winner(metrics=metrics)
    note = training_job_resume_note(job_id=job_id)
    return (f"Cancelled on request: {stopped[0].lower()}{stopped[1:]}. The best model found "
            f"so far ({winner.get('model_type', '?')}, validation macro-F1 "
            f"{winner.get('validation_macro_f1', 0.0):.3f}) is saved as this model; the test "
            f"split was not scored. {note[0].upper()}{note[1:]}.")


@dataclass
class _Run:
    """One training process's state, filled in step by step: each step reads what the steps
    before it left here."""

    job: TrainingJob
    writer: ProgressWriter
    heartbeat: Heartbeat
    sync: checkpoint_sync.CheckpointSync | None = None
    train: ml_models.TextData = field(init=False)
    val: ml_models.TextData = field(init=False)
    test: ml_models.TextData = field(init=False)
    config: ml_models.TrainConfig = field(init=False)
    plan: ml_models.DevicePlan = field(init=False)
    clf: ml_models.Classifier = field(init=False)
    val_metrics: dict[str, Any] = field(init=False)
    # A search stopped on request: why. Its best model so far is saved, not dropped, and the
    # test split is left for the resumed search (the cancel grace is short).
    kept: str = ""
    test_metrics: dict[str, Any] = field(default_factory=dict)
    baseline: Any = None
    artifact: Path = field(init=False)
    metrics: dict[str, Any] = field(init=False)
    digest: str = ""


def _step_data(run: _Run) -> None:
    """The three splits, the job's settings, and its checkpoints shared as they are written."""
    run.writer.set_phase(P.PREPARING, f"training process {os.getpid()} started; loading data")
    run.writer.flush(force=True)
    dataset = run.job.ml_model.dataset
    run.train, run.val, run.test = (load_split(dataset, s) for s in ("train", "validation", "test"))
    run.writer.line(f"data: {len(run.train)} train, {len(run.val)} validation, "
                    f"{len(run.test)} test rows")
    run.config = build_config(run.job, run.writer)
    (run.train, run.val, run.test), line = splits_with_metadata(
        job=run.job, config=run.config, splits=(run.train, run.val, run.test))
    run.writer.line(line)
    run.sync = checkpoint_sync.checkpoint_sync_start(
        job=run.job, output_dir=Path(run.config.output_dir))


def _step_device(run: _Run) -> None:
    """Where the job runs, recorded on the job and the model before the fit starts."""
    writer = run.writer
    if needs_no_torch(run.job.ml_model.model_type, run.config):
        # scikit-learn only: importing torch and transformers here cost ~7 s of a TF-IDF
        # job that fits in one or two, and there is no device to plan.
        from classification.engine.device import plan_cpu_only

        plan = plan_cpu_only("scikit-learn baseline: CPU only (no torch needed)")
    else:
        # Heavy imports are their own progress steps, so a hang inside one is located.
        # Trainer only where a transformer is fine-tuned: importing it took 1 min 49 s of a
        # loaded 2-core machine, from a search over TF-IDF and embedding kinds.
        libraries = ("torch", "transformers") + (
            ("transformers.trainer",) if needs_trainer(run.job.ml_model.model_type, run.config)
            else ())
        for library in libraries:
            writer.line(f"importing {library}")
            writer.flush(force=True)
            importlib.import_module(library)
        plan = ml_models.plan_device(use_mps=run.config.use_mps)
    writer.line(f"device: {plan.device}, {plan.threads} threads, {plan.dtype} ({plan.reason})")
    plan_dict = _jsonable(plan.as_dict())
    TrainingJob.objects.filter(pk=run.job.pk).update(device_plan=plan_dict)
    MLModel.objects.filter(pk=run.job.ml_model_id).update(
        device_plan=plan_dict, device_used=plan.device
    )
    writer.flush(force=True)
    run.plan = plan


def _step_fit(run: _Run) -> None:
    run.clf = ml_models.create_classifier(run.job.ml_model.model_type, device_plan=run.plan)
    stop_if_asked(run.writer)  # the imports and the device plan take seconds
    run.val_metrics = run.clf.fit(run.train, run.val, run.config, run.writer.progress_cb,
                                  run.writer.should_stop)
    if run.sync is not None:
        # No checkpoint comes after fit. Waiting here for a publish in flight keeps it from
        # landing after the job completes, or from being cut off when the process exits;
        # a cancel from here on still publishes the last one (_cancelled()).
        run.sync.stop()
    run.kept = getattr(run.clf, "stopped_reason", "")
    from classification.jobs import adapt  # its collector reads the unlabelled texts

    self_training_rounds_run(run=run, collect=adapt.adapt_corpus_collect)  # if the job asks


def _step_test(run: _Run) -> None:
    # The final phases are short and cannot be interrupted inside; a cancel asked for during
    # one is honoured at the next boundary, keeping the last epoch's checkpoint.
    if run.kept:
        return
    stop_if_asked(run.writer)
    run.writer.set_phase(P.EVALUATING, f"evaluating on the test split ({len(run.test)} rows)",
                         percent=FINAL_TEST)
    run.writer.flush(force=True)
    run.test_metrics = run.clf.evaluate(run.test) if len(run.test) else {}


def _step_baseline(run: _Run) -> None:
    run.baseline = baseline_check.validation_baseline(
        model_type=run.job.ml_model.model_type, train=run.train, val=run.val, config=run.config)
    if not run.kept:
        stop_if_asked(run.writer)


def _step_save(run: _Run) -> None:
    run.writer.set_phase(P.SAVING, "saving the model")
    run.writer.flush(force=True)
    run.artifact = paths.model_artifact_dir(run.job.ml_model_id)
    run.clf.save(str(run.artifact))  # the engine writes a temp folder and os.replace()s it in


def _step_verify(run: _Run) -> None:
    """The saved model loads back and answers; its metrics are the ones the model row keeps."""
    run.writer.set_phase(P.SAVING, "verifying that the saved model loads back",
                         percent=VERIFYING)
    run.writer.flush(force=True)
    loaded = ml_models.load_classifier(str(run.artifact))
    if run.val.texts or run.test.texts:
        # It must load back and answer, on the fast path too where batches will take it.
        loaded.predict([(run.test.texts or run.val.texts)[0]], fast=True)
    val_metrics = run.val_metrics or {}
    run.metrics = _jsonable({
        **(run.test_metrics or val_metrics),
        "evaluated_on": "test" if run.test_metrics else "validation",
        "baseline": run.baseline,
        "metadata": metadata_summary(loaded.config.metadata_used if loaded.config else []),
        **ml_models.fast_path_summary(loaded.fast_path),
        **{k: val_metrics[k] for k in ("search", "self_training") if k in val_metrics},
        "validation": {k: v for k, v in val_metrics.items()
                       if not isinstance(v, (dict, list))},
    })
    run.writer.line("saved and verified: it loads back and predicts")
    run.writer.flush(force=True)


def _step_publish(run: _Run) -> None:
    run.digest = filestore.tree_publish(folder=run.artifact)
    if run.digest:
        run.writer.line(f"published to the shared storage as {run.digest[:12]}")


def _step_finish(run: _Run) -> None:
    reason = kept_search_reason(run.kept, run.metrics, job_id=run.job.pk) if run.kept else ""
    ended = complete(run.job, clf=run.clf, artifact=run.artifact, metrics=run.metrics,
                     kept_reason=reason, digest=run.digest)
    # If the supervisor ended the job first (stall, cancel), this artifact belongs to no
    # one, unless the model already stands on it (a search's kept best).
    if not ended:
        artifact_tree_forget(digest=run.digest)
    if not ended and not MLModel.objects.filter(
            pk=run.job.ml_model_id, status=MLModel.Status.TRAINED).exists():
        shutil.rmtree(run.artifact, ignore_errors=True)


STEPS = (_step_data, _step_device, _step_fit, _step_test, _step_baseline, _step_save,
         _step_verify, _step_publish, _step_finish)


@dataclass(frozen=True)
class _Ending:
    """How a job that did not reach _step_finish ends: its state, reason and exit code."""

    target: str
    reason: str
    exit_code: int = 0
    fields: dict[str, Any] = field(default_factory=dict)


def _cancelled(run: _Run, exc: Exception) -> _Ending:
    saved = exc.checkpoint_path if isinstance(exc, ml_models.TrainingStopped) else None
    if run.sync is not None:
        run.sync.finish()  # the cancel's checkpoint is the one another node would resume from
    reason, checkpoint = stopped_reason(run.writer, job_id=run.job.pk, saved=saved)
    run.writer.line(reason)
    return _Ending(S.CANCELLED, reason, fields={"checkpoint_path": checkpoint})


def _unavailable(run: _Run, exc: Exception) -> _Ending:
    """The model's weights cannot be had here: its message says why, and a resume may work."""
    return _Ending(S.FAILED, f"{exc}\nResume: {training_job_resume_note(job_id=run.job.pk)}.")


def _crashed(run: _Run, exc: Exception) -> _Ending:
    logger.error("job %s failed", run.job.pk, exc_info=exc)
    run.writer.line(f"error: {type(exc).__name__}: {exc}")
    # The first line stays the error itself (the job page shows only that); what a resume
    # would start from comes right after it, above the traceback.
    first, _, trace = short_traceback(exc).partition("\n")
    reason = f"{first}\nResume: {training_job_resume_note(job_id=run.job.pk)}.\n{trace}"
    return _Ending(S.FAILED, reason, exit_code=1)


def _end_early(run: _Run, exc: Exception) -> int:
    """The one error path: each failure class mapped to its ending, then the job ended so."""
    endings = ((ml_models.TrainingStopped, _cancelled), (StopBeforeEnd, _cancelled),
               (ml_models.ModelUnavailableError, _unavailable), (Exception, _crashed))
    ending = next(end for kind, end in endings if isinstance(exc, kind))(run, exc)
    run.writer.flush(force=True)
    lifecycle.training_job_finish(job_id=run.job.pk, target=ending.target,
                                  reason=ending.reason, **ending.fields)
    return ending.exit_code


def run_training(*, job_id: int) -> int:
    """Train one job to its end; returns the process exit code."""
    job = TrainingJob.objects.select_related("ml_model__dataset").get(pk=job_id)
    if job.status != S.RUNNING:
        return 0
    writer = ProgressWriter(job, interval=float(settings.PROGRESS_WRITE_INTERVAL))
    run_class, steps = _Run, STEPS
    if job.ml_model.model_type == adapt_encoders.ADAPT:
        # An adapt job is a training job whose child runs other steps (jobs/adapt.py).
        from classification.jobs import adapt

        run_class, steps = adapt.AdaptRun, adapt.ADAPT_STEPS
    run = run_class(job=job, writer=writer,
                    heartbeat=Heartbeat(job.pk, interval=float(settings.HEARTBEAT_INTERVAL)))
    run.heartbeat.start()
    try:
        for step in steps:
            step(run)
        return 0
    except Exception as exc:
        return _end_early(run, exc)
    finally:
        if run.sync is not None:
            run.sync.stop()
        run.heartbeat.stop()
        connection.close()
