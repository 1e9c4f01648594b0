"""Self-training, an option of any fine-tuning job (issue 30): after the first fit the model
labels the unlabelled texts it is sure of (engine/self_training.pseudo_labels), those rows join
the training rows, and it fits again, for `self_training_rounds` rounds. Each round is judged on
validation like any setting, and the round with the best validation macro-F1 is the model kept
(round 0, the plain fit, included: self-training that does not help is dropped).

No validation or test text is ever pseudo-labelled: the unlabelled texts come from
adapt.adapt_corpus_collect given this job's dataset too, so any text equal under
dataset_management.normalize.text_key to one of its validation or test rows is left out, as are
the picked datasets' own validation and test rows, and this dataset's training rows (they have
labels already).
"""

from __future__ import annotations

import dataclasses
import json
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from classification import ml_models
from classification.engine.self_training import pseudo_labels
from classification.models import BatchJob
from dataset_management.models import Dataset
from dataset_management.normalize import text_key
from dataset_management.selectors import dataset_split_examples

SOURCES = ("self_training_datasets", "self_training_batches")


def _error(message: str, key: str = "self_training_datasets") -> ml_models.TrainConfigError:
    return ml_models.TrainConfigError({key: [message]})


def self_training_sources_require(*, dataset: Any, model_type: str,
                                  config: dict[str, Any]) -> None:
    """TrainConfigError unless the settings name sources self-training can read: rounds with
    at least one source, each dataset and finished batch in the dataset's project (the person
    may train there: training_job_create checked it), for a model kind that fits one model.
    Sources without rounds are refused too, rather than silently unused."""
    rounds = int(config.get("self_training_rounds") or 0)
    dataset_ids = [int(i) for i in config.get("self_training_datasets") or []]
    batch_ids = [uuid.UUID(h) for h in config.get("self_training_batches") or []]
    if not rounds:
        if dataset_ids or batch_ids:
            raise _error("Set self-training rounds (1 to 3) to use unlabelled texts.",
                         "self_training_rounds")
        return
    if not _applies(model_type):
        raise _error("Self-training applies to a TF-IDF, embedding or transformer model, not a "
                     "search or an ensemble.", "self_training_rounds")
    if not dataset_ids and not batch_ids:
        raise _error("Pick at least one dataset or batch of unlabelled texts.")
    found = set(Dataset.objects.filter(pk__in=dataset_ids, project_id=dataset.project_id)
                .values_list("pk", flat=True))
    if missing := [i for i in dataset_ids if i not in found]:
        # Missing and in another project read the same: no hint of another project's rows.
        raise _error(f"No dataset {missing[0]} in this dataset's project.")
    batches = {b.pk: b for b in BatchJob.objects.filter(pk__in=batch_ids,
                                                       project_id=dataset.project_id)}
    if missing_batch := [b for b in batch_ids if b not in batches]:
        raise _error(f"No batch {missing_batch[0].hex} in this dataset's project.",
                     "self_training_batches")
    if unfinished := [b for b in batches.values() if b.status != BatchJob.Status.COMPLETED]:
        raise _error(f"Batch “{unfinished[0].filename}” has not completed: only a finished "
                     "batch's articles can be read.", "self_training_batches")


def _applies(model_type: str) -> bool:
    spec = ml_models.REGISTRY.get(model_type)
    return spec is not None and ml_models.SETTINGS["self_training_rounds"].applies_to(spec.kind)


@dataclass
class UnlabelledPool:
    """The texts self-training may label, and what was left out (the job's log shows both)."""

    texts: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)


def self_training_pool(*, dataset: Any, config: ml_models.TrainConfig,
                       collect: Callable[..., Any]) -> UnlabelledPool:
    """The picked datasets' training texts and the picked batches' articles, each once, none
    equal to a validation or test row of `dataset` or of a picked dataset, nor to one of
    `dataset`'s training rows. `collect` is adapt.adapt_corpus_collect, handed in by the
    training step: importing it here would close an import circle through training.py."""
    picked = [int(i) for i in config.self_training_datasets]
    datasets = [dataset, *Dataset.objects.filter(pk__in=picked).exclude(pk=dataset.pk)
                .order_by("pk")]
    batches = list(BatchJob.objects.filter(
        pk__in=[uuid.UUID(h) for h in config.self_training_batches]))
    if len(datasets) - 1 != len(set(picked) - {dataset.pk}) or len(batches) != len(
            config.self_training_batches):
        raise RuntimeError("A dataset or batch self-training reads has been deleted; train "
                           "again with the sources that remain.")
    # Given this job's dataset, the collector leaves out its validation and test rows and
    # every text equal to one; it also takes its training rows, dropped here.
    corpus = collect(datasets=datasets, batches=batches, training_only=True)
    labelled = {text_key(t) for t in dataset_split_examples(dataset=dataset, split="train").texts}
    texts = [t for t in corpus.texts if text_key(t) not in labelled]
    counts = {**corpus.counts, "training_rows": len(corpus.texts) - len(texts),
              "texts": len(texts)}
    return UnlabelledPool(texts=texts, counts=counts)


def _pseudo_rows_write(*, folder: str, number: int,
                       added: list[tuple[str, list[str]]]) -> None:
    """The round's pseudo-labelled rows as JSON lines in the job's folder: what the model
    learned from is there to read (and to check that no held-out text is among them)."""
    path = os.path.join(folder, f"pseudo_labels_round_{number}.jsonl")
    with open(f"{path}.tmp", "w", encoding="utf-8") as out:
        out.writelines(json.dumps({"text": t, "labels": labels}) + "\n" for t, labels in added)
    os.replace(f"{path}.tmp", path)


def _scores(metrics: dict[str, Any]) -> tuple[float, float]:
    return float(metrics.get("macro_f1") or 0.0), float(metrics.get("micro_f1") or 0.0)


def _refit(run: Any, *, number: int,
           added: list[tuple[str, list[str]]]) -> tuple[Any, dict[str, Any]]:
    """A fresh classifier fitted on the training rows plus `added`. A transformer round writes
    its checkpoints in a folder of its own: the job's resume reads only the first fit's."""
    train = ml_models.TextData(run.train.texts + [t for t, _ in added],
                               run.train.labels + [labels for _, labels in added])
    config = dataclasses.replace(run.config, resume_from_checkpoint=None, output_dir=os.path.join(
        run.config.output_dir, f"self_training_round_{number}"))
    clf = ml_models.create_classifier(run.job.ml_model.model_type, device_plan=run.plan)
    metrics = clf.fit(train, run.val, config, run.writer.progress_cb, run.writer.should_stop)
    return clf, metrics


def _stop_if_asked(writer: Any) -> None:
    if writer.should_stop():  # the job's cancel path takes this as a stop like any other
        raise ml_models.TrainingStopped(None, "Stopped between self-training rounds")


def self_training_rounds_run(*, run: Any, collect: Callable[..., Any]) -> None:
    """The rounds after the first fit (training._step_fit), if the job asks: leaves the best
    round's classifier and validation metrics on `run`, every round's record under
    metrics["self_training"]."""
    config, writer = run.config, run.writer
    if not config.self_training_rounds or run.kept or not _applies(run.job.ml_model.model_type):
        return
    pool = self_training_pool(dataset=run.job.ml_model.dataset, config=config, collect=collect)
    c = pool.counts
    writer.line(f"self-training: {c['texts']} unlabelled texts; left out: "
                f"{c['equal_to_a_test_row']} equal to a test row, "
                f"{c['equal_to_a_validation_row']} equal to a validation row, "
                f"{c['training_rows']} training rows, {c['duplicates']} duplicates")
    macro, micro = _scores(run.val_metrics or {})
    rounds = [{"round": 0, "rows_added": 0, "validation_macro_f1": macro,
               "validation_micro_f1": micro}]
    best, current = (macro, 0, run.clf, run.val_metrics), run.clf
    for number in range(1, int(config.self_training_rounds) + 1):
        _stop_if_asked(writer)
        prob = current.predict_proba(pool.texts) if pool.texts else []
        labels = pseudo_labels(prob, label_names=list(current.label_names),
                               multi_label=bool(current.multi_label),
                               threshold=float(config.self_training_threshold))
        added = [(t, chosen) for t, chosen in zip(pool.texts, labels, strict=True) if chosen]
        if not added:
            writer.line(f"self-training round {number}: no text is sure enough "
                        f"(confidence {config.self_training_threshold:g}); rounds end here")
            break
        _pseudo_rows_write(folder=config.output_dir, number=number, added=added)
        current, metrics = _refit(run, number=number, added=added)
        macro, micro = _scores(metrics)
        rounds.append({"round": number, "rows_added": len(added), "validation_macro_f1": macro,
                       "validation_micro_f1": micro})
        writer.line(f"self-training round {number}: {len(added)} pseudo-labelled rows added; "
                    f"validation micro-F1 {micro:.3f}, macro-F1 {macro:.3f}")
        if macro > best[0]:
            best = (macro, number, current, metrics)
        writer.flush(force=True)
    _, kept, run.clf, metrics = best
    writer.line(f"self-training: round {kept} kept (best validation macro-F1 {best[0]:.3f})")
    run.val_metrics = {**(metrics or {}), "self_training": {
        "rounds": rounds, "kept_round": kept, "unlabelled": pool.counts,
        "threshold": float(config.self_training_threshold)}}
