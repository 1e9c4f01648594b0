"""Simulation as a job: the page's run of ``manage.py simulate_screening``, on the inference queue.

``simulation_summary`` is the one function both the command and the job call, so the summary a
page shows is the command's JSON for the same options. The job adds each seed's recall curve.
States move queued -> running -> completed | failed by conditional UPDATEs: a message delivered
twice runs once, and a finished run is never rewritten.
"""

from __future__ import annotations

import csv
import logging
from datetime import timedelta
from typing import Any

import numpy as np
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from classification.engine.types import article_text
from core.queueing import task_send_on_commit
from dataset_management import selectors as dataset_selectors
from projects import policy
from screening import encoder, simulation
from screening.models import SimulationRun
from screening.services import ScreeningError

logger = logging.getLogger(__name__)

TASK = "screening.tasks.simulation_run"
MAX_SEEDS = 20
# Far beyond any replay measured here (20 seeds on 2,855 records: under 2 minutes).
STALE_RUN_HOURS = 6.0


def simulation_collection(*, dataset: Any, label: str) -> tuple[list[str], np.ndarray]:
    """The dataset's texts and 0/1 truth for the label; ScreeningError unless fully labelled.

    A labelled dataset keeps only rows with labels (the importer drops the others), so a label
    among its label names is known for every record.
    """
    if not dataset.label_names:
        raise ScreeningError(
            f"Dataset “{dataset.name}” is not labelled: a simulation replays the labels a "
            "dataset already has. Import the file with its label column.")
    if label not in dataset.label_names:
        raise ScreeningError(
            f"Dataset “{dataset.name}” has no label '{label}': it is not labelled for it. Its "
            f"labels: {', '.join(dataset.label_names)}.")
    if not dataset.rows_path:
        raise ScreeningError(f"Dataset “{dataset.name}” has no rows to replay.")
    texts, truth = [], []
    for row in dataset_selectors.dataset_rows_iter(dataset=dataset, with_record=False):
        texts.append(article_text(row.get("title"), row.get("abstract")))
        truth.append(int(label in (row.get("labels") or [])))
    if not any(truth) or all(truth):
        raise ScreeningError(
            f"{'No' if not any(truth) else 'Every'} record of dataset “{dataset.name}” has "
            f"'{label}': there is nothing for a ranker to tell apart.")
    return texts, np.asarray(truth, dtype=int)


def simulation_csv_collection(*, path: str, label: str) -> tuple[list[str], np.ndarray]:
    """Texts and 0/1 truth from a labelled CSV file outside the database (the command's --csv).

    Columns: ``title`` and ``abstract``, and either ``group`` (labels joined with ``|``, as in
    demo_data/medlit_challenge.csv; `label` is one of them) or ``included`` (0/1; `label` is
    then just a name). The delimiter (``;`` or ``,``) is sniffed from the header.
    """
    with open(path, encoding="utf-8-sig", newline="") as handle:
        header = handle.readline()
        handle.seek(0)
        rows = list(csv.DictReader(handle, delimiter=";" if header.count(";") > header.count(
            ",") else ","))
    if not rows or "abstract" not in rows[0]:
        raise ScreeningError(f"{path}: a title and an abstract column are needed.")
    if "included" in rows[0]:
        truth = [int(str(r["included"]).strip() in ("1", "yes", "true")) for r in rows]
    elif "group" in rows[0]:
        truth = [int(label in (r["group"] or "").split("|")) for r in rows]
    else:
        raise ScreeningError(f"{path}: no 'included' or 'group' column to read the truth from.")
    if not any(truth) or all(truth):
        raise ScreeningError(f"{path}: every record or none has '{label}'.")
    texts = [article_text(r.get("title"), r.get("abstract")) for r in rows]
    return texts, np.asarray(truth, dtype=int)


def simulation_summaries(*, texts: list[str], truth: np.ndarray, label: str, seeds: int,
                         rules: list[str], rankers: list[str], source: Any,
                         **options: Any) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Per ranker and rule: the command's JSON object and each seed's recall curve."""
    head = {"dataset": source, "label": label, "records": len(truth),
            "relevant": int(truth.sum())}
    embed = (encoder.texts_embed if any(simulation.rankers.needs_vectors(r) for r in rankers)
             else None)
    return [({**head, **result}, curves) for result, curves in simulation.simulate_combinations(
        texts=texts, truth=truth, seeds=seeds, rules=rules, rankers_=rankers, embed=embed,
        **options)]


def simulation_summary(*, dataset: Any, label: str, seeds: int, recall_target: float = 0.95,
                       confidence: float = 0.95, every: int = 10, patience: int = 50,
                       reviewers: int = 1, rule: str = simulation.stopping_rules.DEFAULT_RULE,
                       ranker: str = simulation.rankers.DEFAULT_RANKER,
                       ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The command's JSON object, and each seed's recall curve (screening.simulation)."""
    texts, truth = simulation_collection(dataset=dataset, label=label)
    return simulation_summaries(
        texts=texts, truth=truth, label=label, seeds=seeds, rules=[rule], rankers=[ranker],
        source=dataset.pk, recall_target=recall_target, confidence=confidence, every=every,
        patience=patience, reviewers=reviewers)[0]


def simulation_run_create(*, user: Any, dataset: Any, label: str, recall_target: float = 0.95,
                          confidence: float = 0.95, seeds: int = 5, every: int = 10,
                          patience: int = 50) -> SimulationRun:
    """Queue a simulation of screening `dataset` for `label`; refused with a message unless the
    dataset is fully labelled for it. Sent to the inference queue once the row is committed."""
    policy.require(user=user, action=policy.Action.MANAGE_SCREENING, obj=dataset)
    label = label.strip()
    if not (0 < recall_target < 1 and 0 < confidence < 1):
        raise ScreeningError("The recall target and the confidence lie between 0 and 1.")
    if not 1 <= seeds <= MAX_SEEDS or every < 1 or patience < 1:
        raise ScreeningError(f"Run 1 to {MAX_SEEDS} seeds, refitting after at least 1 "
                             "decision and switching after at least 1 irrelevant record.")
    simulation_collection(dataset=dataset, label=label)  # refuse now, not in the worker
    with transaction.atomic():
        run = SimulationRun.objects.create(
            dataset=dataset, label=label, recall_target=recall_target, confidence=confidence,
            seeds=seeds, every=every, patience=patience, created_by=user)

        def unreachable(reason: str) -> None:
            _finish(run_id=run.pk, state=SimulationRun.State.FAILED, error=reason,
                    states=(SimulationRun.State.QUEUED,))

        task_send_on_commit(name=TASK, args=(run.pk,), queue=settings.QUEUE_INFERENCE,
                            on_unreachable=unreachable)
    return run


def _finish(*, run_id: int, state: str, states: tuple[str, ...], error: str = "",
            result: dict[str, Any] | None = None) -> bool:
    fields: dict[str, Any] = {"state": state, "error": error, "finished_at": timezone.now()}
    if result is not None:
        fields["result"] = result
    return bool(SimulationRun.objects.filter(pk=run_id, state__in=states).update(**fields))


def simulation_run_execute(*, run_id: int) -> SimulationRun | None:
    """Run a queued simulation (the task calls this); None when it is not queued any more."""
    taken = SimulationRun.objects.filter(pk=run_id, state=SimulationRun.State.QUEUED).update(
        state=SimulationRun.State.RUNNING, started_at=timezone.now())
    if not taken:
        return None
    run = SimulationRun.objects.select_related("dataset").get(pk=run_id)
    try:
        summary, curves = simulation_summary(
            dataset=run.dataset, label=run.label, seeds=run.seeds,
            recall_target=run.recall_target, confidence=run.confidence, every=run.every,
            patience=run.patience)
    except Exception as exc:  # the page shows why; the worker goes on
        logger.exception("screening simulation %s failed", run_id)
        message = str(exc) if isinstance(exc, ScreeningError) else (
            f"The simulation failed ({type(exc).__name__}: {exc}).")
        _finish(run_id=run_id, state=SimulationRun.State.FAILED, error=message,
                states=(SimulationRun.State.RUNNING,))
    else:
        _finish(run_id=run_id, state=SimulationRun.State.COMPLETED,
                states=(SimulationRun.State.RUNNING,), result={
                    "summary": summary, "curves": curves,
                    "random": [[0, 0], [summary["records"], summary["relevant"]]]})
    run.refresh_from_db()
    return run


def simulation_runs_fail_stale(*, hours: float = STALE_RUN_HOURS) -> str:
    """Beat's maintenance step (core.registry): fail runs whose worker died mid-run.

    A run is acked on receipt, so a worker killed mid-run leaves it "running" with nobody left
    to finish it; the page would wait for ever. The 20-seed demo replay takes under two minutes.
    """
    cutoff = timezone.now() - timedelta(hours=hours)
    failed = SimulationRun.objects.filter(
        state=SimulationRun.State.RUNNING, started_at__lt=cutoff
    ).update(state=SimulationRun.State.FAILED, finished_at=timezone.now(), error=(
        f"No result after {hours:g} hours: the worker running it most likely stopped. Start "
        "the simulation again."))
    return f"{failed} stale screening simulation(s) failed" if failed else ""
