"""The training-time estimate shown before Start, and what it learns from finished jobs.

Deliberately cheap: the web process must not import torch just to draw a form, so the device
comes from the last plan a training job recorded on this machine, or from the core count.

The formula is engine/time_estimate.py's, the one the search estimates its trials with; this
module supplies what only the database knows: the rates this install's finished jobs ran at
(`observed_rates` solves the formula backwards), the page's datasets and adapted encoders.
static/js/model_new.js mirrors the formula line for line, fed by `estimator_data`, and
scripts/benchmark_estimates.py reports estimate against actual.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from django.db.models import FloatField, QuerySet
from django.db.models.fields.json import KT
from django.db.models.functions import Cast

from classification.engine import model_size, time_estimate
from classification.engine.model_size import MINILM_L6
from classification.engine.registry import REGISTRY, ModelSpec
from classification.engine.time_estimate import (
    EVAL_COST,
    FALLBACK_P95_WORDS,
    GPU_SPEEDUP,
    SPECIAL_TOKENS,
    TOKENS_PER_WORD,
)
from classification.jobs.adapt_encoders import ADAPTED
from classification.models import MLModel, TrainingJob
from dataset_management.models import Dataset


def with_p95_words(datasets: QuerySet[Dataset]) -> QuerySet[Dataset]:
    """Each dataset with `p95_words`, its 95th-percentile length in words, read in the query."""
    return datasets.annotate(
        p95_words=Cast(KT("report__text_length__words__p95"), FloatField()))


def training_estimate_seconds(
    *, model_type: str, sizes: dict[str, int], epochs: int, max_length: int,
    p95_words: float | None, rate: float, threads: int, device: str,
) -> float:
    """Seconds from the job starting to the model saved, at `rate` samples/s/thread (256 tok)."""
    train, val, test = (int(sizes.get(k) or 0) for k in ("train", "validation", "test"))
    return time_estimate.estimate_seconds(
        spec=REGISTRY[model_type], train=train, validation=val, test=test, epochs=epochs,
        max_length=max_length, p95_words=p95_words, rate=rate, threads=threads, device=device)


def device_plan_summary() -> dict[str, Any]:
    """The most recent device plan a job recorded; else a CPU guess from the core count."""
    plan = (
        TrainingJob.objects.exclude(device_plan={})
        .order_by("-created_at")
        .values_list("device_plan", flat=True)
        .first()
    )
    if plan:
        return {**plan, "source": "recorded by the last training job on this machine"}
    try:
        threads = len(os.sched_getaffinity(0))
    except AttributeError:
        threads = os.cpu_count() or 1
    return {
        "device": "cpu",
        "threads": threads,
        "dtype": "float32",
        "reason": "no job has run yet; assuming CPU with all available cores",
        "source": "guessed from the core count",
    }


def observed_rates(*, plan: dict[str, Any], limit: int = 30) -> dict[str, float]:
    """Per-thread samples/s at 256 tokens (at the reference encoder size), measured from this
    install's finished trainings: the newest finished job of each type, its duration solved
    for the rate on the threads and device it recorded (`plan`'s for a job that recorded
    none). Runs whose duration is mostly the fixed overhead are skipped."""
    rows = list(
        TrainingJob.objects.filter(status=TrainingJob.Status.COMPLETED,
                                   started_at__isnull=False, finished_at__isnull=False)
        .order_by("-finished_at")
        .values_list("ml_model__model_type", "ml_model__dataset__split_sizes", "config",
                     "current_epoch", "started_at", "finished_at", "device_plan",
                     "ml_model__dataset_id")[:limit]
    )
    # A key path inside a related row's JSON is not portable (PostgreSQL reads it as a path into
    # the foreign key), so each dataset's length figure is read from its own row.
    p95_by_dataset = dict(
        with_p95_words(Dataset.objects.filter(pk__in={row[-1] for row in rows}))
        .values_list("pk", "p95_words")
    )
    ratios = _encoder_ratios(rows)
    found: dict[str, float] = {}
    for model_type, sizes, config, epochs, started, finished, ran_on, dataset_id in rows:
        spec = REGISTRY.get(model_type)
        if spec is None or model_type in found or not sizes or not sizes.get("train"):
            continue
        config, ran_on = config or {}, ran_on or plan
        # An adapted or custom job ran at its encoder's size: its rate is learned as the rate
        # of the encoder the type's figure is for, so a tiny encoder's job does not make a
        # BERT-base one look fast (adapted_figures and the search scale it back).
        ratio = ratios.get(int(config.get("encoder_model_id") or 0), 1.0) \
            if model_type == ADAPTED else _folder_ratio(spec=spec, config=config)
        rate = time_estimate.rate_from_run(
            spec=spec, seconds=(finished - started).total_seconds(),
            train=int(sizes.get("train") or 0), validation=int(sizes.get("validation") or 0),
            test=int(sizes.get("test") or 0),
            # Epochs actually run (early stopping may end sooner than the setting).
            epochs=max(1, round(float(epochs or config.get("epochs") or 1))),
            max_length=int(config.get("max_length") or 256),
            p95_words=p95_by_dataset.get(dataset_id),
            threads=max(1, int(ran_on.get("threads") or 1)),
            device=str(ran_on.get("device", "cpu")), work_ratio=ratio)
        if rate is not None:
            found[model_type] = rate
    return found


def _folder_ratio(*, spec: ModelSpec, config: dict[str, Any]) -> float:
    """A custom job's folder's size over its figure's reference (1.0 for other kinds, or a
    folder no longer readable)."""
    if spec.weights != "model_path" or spec.speed.measured_on is None:
        return 1.0
    return model_size.work_ratio(model_path=config.get("model_path"),
                                 reference=spec.speed.measured_on)


def _encoder_ratios(rows: list[tuple[Any, ...]]) -> dict[int, float]:
    """{adapted encoder id: its size over the adapted type's reference} for the encoders the
    adapted jobs in `rows` (observed_rates' rows) fine-tuned."""
    ids = {int((row[2] or {}).get("encoder_model_id") or 0) for row in rows if row[0] == ADAPTED}
    return {pk: _encoder_ratio(metrics) for pk, metrics in
            MLModel.objects.filter(pk__in=ids - {0}).values_list("pk", "metrics")}


def _encoder_ratio(metrics: dict[str, Any] | None) -> float:
    """An adapted encoder's size, from its adapt job's metrics, over the encoder the adapted
    type's figures are for (1.0 for one adapted before sizes were recorded)."""
    return model_size.shape_ratio((metrics or {}).get("encoder_shape"),
                                  reference=REGISTRY[ADAPTED].speed.measured_on or MINILM_L6)


def adapted_figures(*, encoder: MLModel, rate: float, overhead: float) -> tuple[float, float]:
    """(rate, overhead) for fine-tuning `encoder`: the adapted type's figures, measured on
    MiniLM-L6, scaled by the encoder's size as its adapt job recorded it (an encoder adapted
    from a BERT-base model does eight times the work per token); the figures themselves for an
    encoder adapted before sizes were recorded."""
    ratio = _encoder_ratio(encoder.metrics)
    return rate / ratio, overhead * model_size.overhead_share(ratio)


def estimator_data(*, datasets: QuerySet[Dataset], presets: dict[str, dict[str, Any]],
                   encoders: Iterable[MLModel] = ()) -> tuple[
        dict[str, Any], dict[str, Any], list[str]]:
    """What the New model page's script needs: (estimator JSON, device plan, measured types).
    Each adapted encoder in `encoders` is a choice of its own ("adapted:<id>", the form's
    value), its rate and overhead the adapted type's scaled by its size (adapted_figures)."""
    datasets = with_p95_words(datasets)
    plan = device_plan_summary()
    measured = observed_rates(plan=plan)
    rates = {key: spec.speed.samples_per_second_per_thread for key, spec in REGISTRY.items()}
    rates.update(measured)
    overhead = {key: spec.speed.overhead_seconds for key, spec in REGISTRY.items()}
    for encoder in encoders:
        key = f"{ADAPTED}:{encoder.pk}"
        rates[key], overhead[key] = adapted_figures(
            encoder=encoder, rate=rates[ADAPTED], overhead=overhead[ADAPTED])
    estimator = {
        "rates": rates,
        "single_pass": sorted(k for k, s in REGISTRY.items() if s.speed.single_pass),
        "overhead": overhead,
        "gpu_speedup": GPU_SPEEDUP,
        "tokens_per_word": TOKENS_PER_WORD, "special_tokens": SPECIAL_TOKENS,
        "eval_cost": EVAL_COST, "fallback_p95_words": FALLBACK_P95_WORDS,
        "plan": {"device": plan.get("device", "cpu"), "threads": plan.get("threads", 1)},
        "presets": presets,
        "datasets": {
            str(d.pk): {
                "sizes": {k: int((d.split_sizes or {}).get(k) or 0)
                          for k in ("train", "validation", "test")},
                "p95_words": d.p95_words,
            }
            for d in datasets
        },
    }
    return estimator, plan, sorted(measured)
