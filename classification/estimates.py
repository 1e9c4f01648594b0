"""The training-time estimate shown before Start, and what it learns from finished jobs.

Deliberately cheap: the web process must not import torch just to draw a form, so the device
comes from the last plan a training job recorded on this machine, or from the core count.

One formula (`training_estimate_seconds`) serves the page (static/js/model_new.js mirrors it
line for line, fed by `estimator_data`), the learning from finished jobs (`observed_rates`
runs it backwards) and scripts/benchmark_estimates.py, which reports estimate against actual.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from django.db.models import FloatField, QuerySet
from django.db.models.fields.json import KT
from django.db.models.functions import Cast

from classification.engine import model_size
from classification.engine.model_size import MINILM_L6
from classification.engine.registry import REGISTRY
from classification.jobs.adapt_encoders import ADAPTED
from classification.models import MLModel, TrainingJob
from dataset_management.models import Dataset

GPU_SPEEDUP = {"cuda": 25.0, "mps": 4.0, "cpu": 1.0}
# Subword tokens per word of biomedical English with a general vocabulary (MiniLM, BERT),
# plus [CLS]/[SEP]; measured on the demo data: 1.45 tokens per word.
TOKENS_PER_WORD = 1.45
SPECIAL_TOKENS = 2
# A forward pass (validation, test) costs about a third of a training step (forward+backward).
EVAL_COST = 1 / 3
FALLBACK_P95_WORDS = 300.0


def effective_length(*, max_length: int, p95_words: float | None) -> float:
    """Tokens a training row costs: batches pad to their longest row, and the engine cuts
    max_length to the data's 95th percentile (TransformerClassifier._choose_max_length)."""
    words = p95_words if p95_words and p95_words > 0 else FALLBACK_P95_WORDS
    tokens = words * TOKENS_PER_WORD + SPECIAL_TOKENS
    return float(max(32, min(max_length, tokens)))


def with_p95_words(datasets: QuerySet[Dataset]) -> QuerySet[Dataset]:
    """Each dataset with `p95_words`, its 95th-percentile length in words, read in the query."""
    return datasets.annotate(
        p95_words=Cast(KT("report__text_length__words__p95"), FloatField()))


def training_estimate_seconds(
    *, model_type: str, sizes: dict[str, int], epochs: int, max_length: int,
    p95_words: float | None, rate: float, threads: int, device: str,
) -> float:
    """Seconds from the job starting to the model saved, at `rate` samples/s/thread (256 tok)."""
    spec = REGISTRY[model_type]
    scale = max(1, threads) ** 0.8 * GPU_SPEEDUP.get(device, 1.0) * max(rate, 1e-6)
    train, val, test = (int(sizes.get(k) or 0) for k in ("train", "validation", "test"))
    if spec.speed.single_pass:
        # One pass to fit on train, then validation and test are featurised/encoded once.
        work = train + val + test
    else:
        length = effective_length(max_length=max_length, p95_words=p95_words) / 256
        work = length * (train * max(1, epochs) + EVAL_COST * (val * max(1, epochs) + test))
    return spec.speed.overhead_seconds + work / scale


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
    """Per-thread samples/s at 256 tokens, measured from this machine's finished trainings.

    training_estimate_seconds solved for the rate, using the newest finished job of each type;
    runs whose duration is mostly the fixed overhead are skipped, as they say little of speed.
    """
    rows = list(
        TrainingJob.objects.filter(status=TrainingJob.Status.COMPLETED,
                                   started_at__isnull=False, finished_at__isnull=False)
        .order_by("-finished_at")
        .values_list("ml_model__model_type", "ml_model__dataset__split_sizes", "config",
                     "current_epoch", "started_at", "finished_at", "ml_model__dataset_id")[:limit]
    )
    # A key path inside a related row's JSON is not portable (PostgreSQL reads it as a path into
    # the foreign key), so each dataset's length figure is read from its own row.
    p95_by_dataset = dict(
        with_p95_words(Dataset.objects.filter(pk__in={row[-1] for row in rows}))
        .values_list("pk", "p95_words")
    )
    threads = max(1, int(plan.get("threads") or 1))
    device = str(plan.get("device", "cpu"))
    ratios = _encoder_ratios(rows)
    found: dict[str, float] = {}
    for model_type, sizes, config, epochs, started, finished, dataset_id in rows:
        p95_words = p95_by_dataset.get(dataset_id)
        spec = REGISTRY.get(model_type)
        if spec is None or model_type in found or not sizes or not sizes.get("train"):
            continue
        # An adapted job ran at its encoder's size: its rate is learned as the rate of the
        # encoder the type's figure is for, so a tiny encoder's job does not make a BERT-base
        # one look fast (adapted_figures scales it back for each encoder).
        ratio = ratios.get(int((config or {}).get("encoder_model_id") or 0), 1.0) \
            if model_type == ADAPTED else 1.0
        overhead = spec.speed.overhead_seconds * model_size.overhead_share(ratio)
        seconds = (finished - started).total_seconds() - overhead
        if seconds < overhead / 2 or seconds <= 0:
            continue
        # Epochs actually run (early stopping may end sooner than the setting).
        ran = max(1, round(float(epochs or (config or {}).get("epochs") or 1)))
        at_rate_one = training_estimate_seconds(
            model_type=model_type, sizes=sizes, epochs=ran,
            max_length=int((config or {}).get("max_length") or 256), p95_words=p95_words,
            rate=1.0, threads=threads, device=device,
        ) - spec.speed.overhead_seconds
        found[model_type] = at_rate_one * ratio / seconds
    return found


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
