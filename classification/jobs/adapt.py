"""The adapt job: an encoder's masked-language-model pretraining continued on the unlabelled
texts of the datasets and batches a person picks (engine/adapt.py does the training).

It is a TrainingJob of a model whose type is `adapt`, not a new kind of job row: the state
machine, claim, supervisor, heartbeat, progress, cancel, resume, checkpoint sharing and reaping
are the training job's, unchanged, and only the child's steps differ (ADAPT_STEPS, chosen by
training.run_training). A job-kind field would have been a migration and a second meaning for
every status; the model's type already says what a job trains.

No test row is ever read: a picked dataset's test split is left out, and so is any other text
(a batch's article, another dataset's row) equal to one of those test rows under
dataset_management.normalize.text_key.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction

from classification import ml_models
from classification.batches.selectors import batch_job_items
from classification.engine.types import article_text
from classification.jobs import checkpoint_sync, lifecycle, routing, training
from classification.jobs.adapt_encoders import ADAPT
from classification.jobs.progress import VERIFYING
from classification.models import BatchJob, MLModel, TrainingJob
from dataset_management.models import Dataset
from dataset_management.normalize import text_key
from projects import policy

P = TrainingJob.Phase
READ_SPLITS = ("train", "validation")
TRAIN_SPLITS = ("train",)


@dataclass
class AdaptCorpus:
    """The texts adaptation reads, and how they were chosen (shown on the job page)."""

    texts: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)


def adapt_corpus_collect(*, datasets: list[Dataset], batches: list[BatchJob],
                         training_only: bool = False) -> AdaptCorpus:
    """Train and validation texts of `datasets` (train only, with `training_only`) and the
    articles of `batches`, each text once, none equal to a test row of any picked dataset nor,
    with `training_only`, to a validation row of one."""
    test_keys = {text_key(t) for d in datasets
                 for t in training.load_split(d, "test").texts}
    held_splits = ("validation",) if training_only else ()
    held_keys = {text_key(t) for d in datasets for split in held_splits
                 for t in training.load_split(d, split).texts} - test_keys
    seen: set[str] = set()
    corpus = AdaptCorpus(counts={"test_rows_left_out": len(test_keys), "dataset_texts": 0,
                                 "batch_texts": 0, "equal_to_a_test_row": 0,
                                 "validation_rows_left_out": len(held_keys),
                                 "equal_to_a_validation_row": 0, "duplicates": 0})

    def take(text: str, source: str) -> None:
        key = text_key(text or "")
        if not key:
            return
        if key in test_keys:
            corpus.counts["equal_to_a_test_row"] += 1
        elif key in held_keys:
            corpus.counts["equal_to_a_validation_row"] += 1
        elif key in seen:
            corpus.counts["duplicates"] += 1
        else:
            seen.add(key)
            corpus.texts.append(text)
            corpus.counts[source] += 1

    for dataset in datasets:
        for split in TRAIN_SPLITS if training_only else READ_SPLITS:
            for text in training.load_split(dataset, split).texts:
                take(text, "dataset_texts")
    for batch in batches:
        for item in batch_job_items(batch=batch) or []:
            take(article_text(item.get("title"), item.get("abstract")), "batch_texts")
    corpus.counts["texts"] = len(corpus.texts)
    return corpus


# ---- creating one ---------------------------------------------------------------------------


def _sources_checked(*, owner: Any, datasets: list[Dataset],
                     batches: list[BatchJob]) -> None:
    """Every source in one project, which the person may train in; ValueError otherwise."""
    if not datasets:
        raise ml_models.TrainConfigError({"adapt_datasets": ["Pick at least one dataset."]})
    project_id = datasets[0].project_id
    if any(d.project_id != project_id for d in datasets) or any(
            b.project_id != project_id for b in batches):
        raise ml_models.TrainConfigError({"adapt_datasets": [
            "Pick datasets and batches of one project: the encoder joins that project."]})
    unfinished = [b for b in batches if b.status != BatchJob.Status.COMPLETED]
    if unfinished:
        raise ml_models.TrainConfigError({"adapt_batches": [
            f"Batch “{unfinished[0].filename}” has not completed: only a finished batch's "
            "articles can be read."]})
    if owner is not None:
        policy.require(user=owner, action=policy.Action.TRAIN, obj=datasets[0])


def _base_checked(*, config: dict[str, Any], staff: bool) -> None:
    base = str(config.get("adapt_base") or "minilm")
    spec = ml_models.REGISTRY.get(base)
    if spec is None or spec.kind != "transformer" or base == "adapted":
        bases = ", ".join(k for k, s in ml_models.REGISTRY.items()
                          if s.kind == "transformer" and k != "adapted")
        raise ml_models.TrainConfigError(
            {"adapt_base": [f"Adapt a transformer encoder: one of {bases}."]})
    if errors := lifecycle.training_model_path_errors(model_type=base, config=config,
                                                      staff=staff):
        raise ml_models.TrainConfigError(errors)


def adapt_job_create(*, owner: Any, datasets: list[Dataset], batches: list[BatchJob],
                     name: str = "", config: dict[str, Any] | None = None,
                     staff: bool | None = None, enqueue: bool = True) -> TrainingJob:
    """Create the `adapt` model and its queued job; the task is sent once this commits (not
    with enqueue=False: `adapt_encoder --in-process` runs the job itself).

    TrainConfigError names each bad field; RoleRequired unless `owner` may train in the
    sources' project. The sources are stored as ids in the job's settings, and read again by
    the worker (a resume reads the same texts)."""
    staff = bool(getattr(owner, "is_staff", False)) if staff is None else staff
    cleaned = ml_models.training_config_clean(config, staff=staff)
    datasets = sorted(datasets, key=lambda d: d.pk)
    _sources_checked(owner=owner, datasets=datasets, batches=batches)
    _base_checked(config=cleaned, staff=staff)
    cleaned["adapt_datasets"] = [str(d.pk) for d in datasets]
    cleaned["adapt_batches"] = [b.pk.hex for b in batches]
    # Stored either way, so a resume (or a later change of the default) reads the same texts.
    cleaned["adapt_training_only"] = bool(cleaned.get(
        "adapt_training_only", ml_models.SETTINGS["adapt_training_only"].default))
    with transaction.atomic():
        ml_model = MLModel(
            owner=owner or datasets[0].owner, project_id=datasets[0].project_id,
            name=name or f"{datasets[0].name} · adapted {cleaned.get('adapt_base', 'minilm')}",
            model_type=ADAPT, dataset=datasets[0], parameters=cleaned,
        )
        merged = lifecycle.job_config(ml_model=ml_model, overrides=None)
        route = routing.training_queue_choose(config=merged)
        ml_model.save()
        job = TrainingJob.objects.create(
            ml_model=ml_model, config=merged, total_epochs=int(merged.get("epochs") or 1),
            celery_task_id=str(uuid.uuid4()), queue=route.queue, log_tail=route.note)
        lifecycle._training_record(job=job, actor=owner, verb="adapt_started", summary=(
            f"{lifecycle._who(owner)} started adapting {cleaned.get('adapt_base', 'minilm')} "
            f"on {len(datasets)} dataset(s) and {len(batches)} batch(es) as “{ml_model.name}”"))
        if enqueue:
            lifecycle._enqueue_on_commit(job, created=True)
    return job


# ---- the training child's steps -------------------------------------------------------------


@dataclass
class AdaptRun(training._Run):
    """training._Run plus the texts the encoder adapts on."""

    corpus: AdaptCorpus = field(default_factory=AdaptCorpus)


def _step_texts(run: AdaptRun) -> None:
    run.writer.set_phase(P.PREPARING, "adapt job: reading the picked datasets and batches")
    run.writer.flush(force=True)
    config = run.job.config
    dataset_ids = [int(i) for i in config.get("adapt_datasets") or []]
    datasets = list(Dataset.objects.filter(pk__in=dataset_ids).order_by("pk"))
    batches = list(BatchJob.objects.filter(pk__in=[uuid.UUID(h) for h in
                                                   config.get("adapt_batches") or []]))
    if len(datasets) != len(dataset_ids) or len(batches) != len(config.get("adapt_batches")
                                                                or []):
        raise RuntimeError("A dataset or batch this adapt job reads has been deleted; start a "
                           "new adapt job with the sources that remain.")
    run.corpus = adapt_corpus_collect(
        datasets=datasets, batches=batches,
        training_only=bool(config.get("adapt_training_only", True)))
    c = run.corpus.counts
    run.writer.line(f"texts: {c['texts']} ({c['dataset_texts']} from datasets, "
                    f"{c['batch_texts']} from batches); left out: {c['test_rows_left_out']} "
                    f"test rows, {c['equal_to_a_test_row']} equal to a test row, "
                    f"{c['validation_rows_left_out']} validation rows and "
                    f"{c['equal_to_a_validation_row']} texts equal to one, "
                    f"{c['duplicates']} duplicates")
    run.config = training.build_config(run.job, run.writer)
    run.sync = checkpoint_sync.checkpoint_sync_start(
        job=run.job, output_dir=Path(run.config.output_dir))


def _step_adapt(run: AdaptRun) -> None:
    run.clf = ml_models.create_classifier(ADAPT, device_plan=run.plan)
    training.stop_if_asked(run.writer)
    run.val_metrics = run.clf.fit_texts(run.corpus.texts, run.config, run.writer.progress_cb,
                                        run.writer.should_stop)
    if run.sync is not None:
        run.sync.stop()
    training.stop_if_asked(run.writer)


def _step_verify(run: AdaptRun) -> None:
    """The saved encoder loads back as a classifier's base would load it."""
    from transformers import AutoConfig, AutoTokenizer

    run.writer.set_phase(P.SAVING, "verifying that the saved encoder loads back",
                         percent=VERIFYING)
    run.writer.flush(force=True)
    AutoConfig.from_pretrained(str(run.artifact))
    AutoTokenizer.from_pretrained(str(run.artifact))
    ml_models.load_classifier(str(run.artifact))
    m = run.val_metrics
    run.metrics = training._jsonable({**m, "corpus": run.corpus.counts,
                                      "evaluated_on": "held-out texts"})
    run.writer.line(f"held-out perplexity {m['perplexity_before']:.2f} -> "
                    f"{m['perplexity_after']:.2f}; {m['tokens_per_second']:.0f} tokens/s")
    run.writer.flush(force=True)


ADAPT_STEPS = (_step_texts, training._step_device, _step_adapt, training._step_save,
               _step_verify, training._step_publish, training._step_finish)
