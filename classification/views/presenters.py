"""Plain-words wording for the pages: what a person should understand and do next."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from django.utils import timezone

from classification.engine.registry import REGISTRY
from classification.engine.schema import ALIASES, SETTINGS
from classification.jobs.resume_notes import training_job_resume_words
from classification.models import TrainingJob

# The hints say what happened, never where a resume starts: only the disk knows that, and the
# reason (written once the training process was gone) names it, so the two cannot disagree.
STATUS_HINTS = {
    "stalled": "The job stopped reporting progress, usually because the worker process died or "
    "the machine slept.",
    "failed": "Training stopped with an error. Fix the cause below, then resume or start again.",
    "cancelled": "You cancelled this job.",
    "queued": "Waiting for the background worker to pick this job up. If it stays queued, "
    "check that the worker is running (start_m1.sh starts it).",
}
# For a reason written without a resume note (an older row, a cancel before the job started),
# by the kind of model: only a transformer saves checkpoints, and a search keeps its study.
RESUME_UNKNOWN = "Resume continues from the newest saved checkpoint, or starts over without one."
RESUME_UNKNOWN_BY_KIND = {
    "search": "Resume continues the search's study, keeping its finished trials, or starts the "
    "search over if none had started.",
    "baseline": "Resume restarts training from scratch (quick): a one-pass fit keeps no "
    "checkpoints.",
    "ensemble": "Resume restarts training from scratch (quick): a one-pass fit keeps no "
    "checkpoints.",
    "embedding": "Resume restarts training from scratch: a one-pass fit keeps no checkpoints.",
}
# How the reasons name the resume point (classification/paths.py resume_words, and the
# "Resume: …" line training.py adds to a failure).
_RESUME_MARKS = ("resume continues", "nothing to resume from", "resume:")


def job_reason_plain(*, status: str, reason: str, model_type: str = "") -> str:
    hint = STATUS_HINTS.get(status, "")
    if status == "queued":
        return hint
    lines = [line.strip() for line in (reason or "").strip().splitlines() if line.strip()]
    # A failure puts the resume note on its own line after the error; the trace is left out.
    shown = lines[:1] + [line for line in lines[1:3] if line.lower().startswith("resume:")]
    text = " ".join(shown)
    says_resume = any(mark in text.lower() for mark in _RESUME_MARKS)
    resumable = status in ("stalled", "cancelled", "failed")
    unknown = RESUME_UNKNOWN_BY_KIND.get(model_kind(model_type), RESUME_UNKNOWN)
    resume = unknown if resumable and not says_resume else ""
    parts = [hint, f"Reason: {text}" if text and hint else text, resume]
    return " ".join(part for part in parts if part)


def resume_banner(*, job: TrainingJob) -> str:
    """What the resume just queued will start from, read from the job row the resume wrote
    (checkpoint_path is the newest complete checkpoint on this node; synced_checkpoint the one
    on shared storage, which the worker fetches first). The job's log says the same: for a
    search (its study) and a one-pass fit (no checkpoints) in the very words of the reason."""
    if model_kind(job.ml_model.model_type) != "transformer":
        return training_job_resume_words(job_id=job.pk).banner
    local = Path(job.checkpoint_path).name if job.checkpoint_path else ""
    shared = job.synced_checkpoint if job.synced_checkpoint.startswith("checkpoint-") else ""
    newest = max([name for name in (local, shared) if name], default="",
                 key=lambda name: int(name.rsplit("-", 1)[-1] or 0))
    if newest:
        return f"Resumed from {newest}: training continues from step {newest.rsplit('-', 1)[-1]}."
    return "Resumed from the start: no checkpoint was saved, so training starts over."


def metric_rows(metrics: dict[str, Any]) -> list[tuple[str, Any]]:
    """The headline numbers in a fixed, readable order."""
    names = [
        ("micro_f1", "Micro-F1"), ("macro_f1", "Macro-F1"), ("accuracy", "Accuracy"),
        ("subset_accuracy", "Subset accuracy"), ("hamming_loss", "Hamming loss"),
        ("weighted_f1", "Weighted F1"), ("ece", "ECE (15 bins)"), ("brier", "Brier score"),
        ("n", "Test examples"),
    ]
    return [(label, metrics[key]) for key, label in names if metrics.get(key) is not None]


# --- The job page: what applies to this model type, and how long the job took -------------------

# Shown nowhere: the label space is the dataset's, listed on its own page; an ensemble's member
# folders are server paths, and its page lists the members by name.
HIDDEN_SETTINGS = frozenset({"label_names", "member_paths"})


def model_kind(model_type: str) -> str:
    """The registry's kind ("transformer", "embedding", "baseline"); unknown types count as
    transformers, so nothing is hidden about a type this version does not know."""
    spec = REGISTRY.get(model_type)
    return spec.kind if spec else "transformer"


def is_single_pass(model_type: str) -> bool:
    """Fitted in one pass (TF-IDF, embeddings + logreg): no epochs, steps or training loss."""
    return model_kind(model_type) != "transformer"


def job_settings(*, model_type: str, config: dict[str, Any]) -> list[tuple[str, Any]]:
    """The job's settings that this model type actually uses, in the config's order."""
    kind = model_kind(model_type)

    def shown(key: str) -> bool:
        spec = SETTINGS.get(ALIASES.get(key, key))
        if spec is not None:
            return spec.applies_to(kind) and key not in HIDDEN_SETTINGS
        # TF-IDF has no knobs a preset picks; other unknown keys are shown, not hidden.
        return not (key == "preset" and kind == "baseline")

    return [(key, value) for key, value in (config or {}).items() if shown(key)]


def format_duration(seconds: float | None) -> str:
    """"8 s", "4 min 05 s", "2 h 03 min"; "–" when unknown. static/js/charts.js agrees."""
    if seconds is None:
        return "–"
    whole = int(max(0.0, seconds) + 0.5)  # halves round up, as Math.round does in the page
    if whole < 60:
        return f"{whole} s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def job_durations(job: Any, *, now: datetime | None = None) -> list[dict[str, Any]]:
    """How long the job waited, ran and took in all, from its timestamps.

    Each row has `key`, `label`, `seconds` (None: not known or not begun), `counting` (still
    growing: the page adds the time since it was drawn) and `text`. A resume re-queues the same
    row and its claim overwrites `started_at`, so for a later attempt "ran" is that attempt's
    run, the wait before it is known only while it waits (a queued row's `updated_at` is when
    it entered the queue), and the total counts every attempt.
    """
    now = now or timezone.now()
    status = job.status
    queued = status == "queued"
    running = status == "running"
    ended = not (queued or running)
    first = (job.attempt or 1) <= 1
    # A resumed job that has not started again (or was cancelled while waiting) keeps the last
    # attempt's started_at; its phase is still "queued".
    began = job.started_at if job.started_at and (first or job.phase != "queued") else None
    end = job.finished_at or (job.updated_at if ended else None)

    def between(start: datetime | None, stop: datetime | None) -> float | None:
        if start is None or stop is None:
            return None
        return max(0.0, (stop - start).total_seconds())

    if queued:
        waited = between(job.created_at if first else job.updated_at, now)
    elif first:
        waited = between(job.created_at, began or end)
    else:
        waited = None
    ran = between(began, now if running else end)
    total = between(job.created_at, end if ended else now)
    attempt = f"attempt {job.attempt}" if not first else ""
    rows = [
        {"key": "queued", "label": f"Waited in queue{' · ' + attempt if attempt else ''}",
         "seconds": waited, "counting": queued,
         "text": format_duration(waited) if waited is not None else "–"},
        {"key": "ran", "label": f"Ran{' · ' + attempt if attempt else ''}",
         "seconds": ran, "counting": running,
         "text": format_duration(ran) if ran is not None else
         ("did not start" if ended else "not started")},
        {"key": "total", "label": "Total" + (" · all attempts" if attempt else ""),
         "seconds": total, "counting": not ended, "text": format_duration(total)},
    ]
    return rows


def job_phase_display(phase: str) -> str:
    try:
        return TrainingJob.Phase(phase).label
    except ValueError:
        return phase.replace("_", " ").capitalize()


def _point_key(point: dict[str, Any]) -> str:
    return f"{point.get('kind', '')}:{point.get('step', '')}"


def job_history_start(history: list[dict[str, Any]], *, since: int, last: str | None) -> int:
    """Where the client's copy of the history ends.

    `since` alone is an index, but the worker keeps only the newest points, so once the cap is
    reached the indexes shift; `last` ("kind:step" of the client's newest point) finds the
    client's place again. 0 means "send everything": the client then redraws from scratch.
    """
    since = min(max(since, 0), len(history))
    if not last or since == 0:
        return since
    if _point_key(history[since - 1]) == last:
        return since
    for index in range(len(history) - 1, -1, -1):
        if _point_key(history[index]) == last:
            return index + 1
    return 0


def job_history_window(history: list[dict[str, Any]] | None, *, since: int = 0,
                       last: str | None = None) -> dict[str, Any]:
    """The part of a job's metrics history a poller has not seen yet, for the job page's JSON
    and the API's `?expand=history` alike."""
    history = history or []
    start = job_history_start(history, since=since, last=last)
    return {
        "history": history[start:],
        "history_length": len(history),
        "history_reset": bool(since) and start == 0 and bool(history),
    }


# --- Compare: which models were scored on the same test rows --------------------------------------

def evaluation_rows_digest(*, dataset: Any) -> str | None:
    """What a model of this dataset was scored on: a digest of the test split's rows (normalised
    text and labels, sorted). A dataset remade from reviews keeps its source's test rows, so it
    gives its source's digest. None without readable rows.

    A rows file is never rewritten (its name is unique), so the digest is cached under it."""
    import hashlib

    import pyarrow.parquet as pq
    from django.core.cache import cache

    from dataset_management.normalize import text_key
    from dataset_management.selectors import dataset_rows_file

    if dataset is None or not dataset.rows_path:
        return None
    cache_key = f"compare:test-rows:v1:{dataset.rows_path}"
    if (cached := cache.get(cache_key)) is not None:
        return cached
    try:
        table = pq.read_table(dataset_rows_file(dataset=dataset),
                              columns=["text", "labels", "split"], filters=[("split", "=", "test")])
    except (OSError, ValueError, KeyError):  # gone, or a file without these columns
        return None
    keys = sorted(f"{text_key(text or '')}\x1f{'|'.join(sorted(labels or []))}"
                  for text, labels in zip(table.column("text").to_pylist(),
                                          table.column("labels").to_pylist(), strict=True))
    digest = hashlib.sha256("\x1e".join(keys).encode("utf-8")).hexdigest()
    cache.set(cache_key, digest, timeout=7 * 24 * 3600)
    return digest


def scored_on_different_test_rows(models: list[Any]) -> bool:
    """True when the models' scores are not like for like: their test rows differ (a model
    without a readable dataset is judged by its dataset id alone)."""
    digests: dict[Any, str] = {}
    keys = set()
    for model in models:
        if model.dataset_id not in digests:
            digests[model.dataset_id] = (evaluation_rows_digest(dataset=model.dataset)
                                         or f"dataset:{model.dataset_id}")
        keys.add(digests[model.dataset_id])
    return len(keys) > 1


def test_rows_measured(model: Any) -> str:
    """'287 of 349 rows': the test rows a model's stored metrics counted, of the split's rows
    ('349 rows' where they are the same; 'n rows' for a model saved before both were kept)."""
    metrics = model.metrics or {}
    scored, total = metrics.get("rows_scored", metrics.get("n")), metrics.get("rows_total")
    if scored is None:
        return ""
    return f"{scored} of {total} rows" if total not in (None, scored) else f"{scored} rows"


def measured_on_different_rows(models: list[Any]) -> bool:
    """True when the models' test metrics were not measured on the same rows: other test rows,
    or the same split with a different count of rows scored."""
    if scored_on_different_test_rows(models):
        return True
    return len({test_rows_measured(model) for model in models}) > 1


def adapted_encoder_cards(encoders: Any) -> list[dict[str, Any]]:
    """The New model page's card for each adapted encoder a person may fine-tune: the form's
    value ("adapted:<id>"), its name, and what adaptation did to its held-out perplexity."""
    cards = []
    for encoder in encoders:
        metrics = encoder.metrics or {}
        before, after = metrics.get("perplexity_before"), metrics.get("perplexity_after")
        change = (f"Held-out perplexity {float(before):.1f} → {float(after):.1f}."
                  if before is not None and after is not None else "")
        cards.append({"value": f"adapted:{encoder.pk}", "name": encoder.name, "change": change})
    return cards


def interval_text(value: float, low: float, high: float) -> str:
    """"0.812 (0.781–0.840)": a score and its interval, as the page and its tests read them."""
    return f"{value:.3f} ({low:.3f}–{high:.3f})"


def p_value_text(p: float) -> str:
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def comparison_display(figures: dict[str, Any]) -> dict[str, Any]:
    """mlmodels.comparison figures as the Compare page's tables: each metric per model as
    interval_text (the best model's cells marked), and each paired difference from the best in
    words, saying plainly when its interval includes 0."""
    best = figures["best"]["id"]
    rows = [
        {"label": metric["label"], "headline": not metric["key"].startswith("f1:"),
         "cells": [{"text": interval_text(**m["metrics"][metric["key"]]),
                    "best": m["id"] == best} for m in figures["models"]]}
        for metric in figures["metrics"]
    ]
    mcnemar = {row["id"]: row for row in figures["mcnemar"]}
    differences = [
        {**d, "text": interval_text(d["difference"], d["low"], d["high"]),
         "p_text": p_value_text(d["p_value"]),
         "verdict": (f"{figures['best']['name']} is better on these rows"
                     if d["distinguishable"] else "not distinguishable on these rows"),
         "mcnemar": mcnemar.get(d["id"]) if d["metric"] == figures["metrics"][0]["key"] else None}
        for d in figures["differences"]
    ]
    for row in mcnemar.values():
        row["p_text"] = p_value_text(row["p_value"])
    return {**figures, "table": rows, "paired": differences}
