"""The supervisor: runs in the Celery worker, spawns the training child and watches it.

It decides from the job row (heartbeat, progress) and the child's exit code, timing everything
on its own monotonic clock, so clock skew between processes cannot fake a stall.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import statistics
import time
from collections import deque
from dataclasses import dataclass, field

from django.conf import settings
from django.db import DatabaseError, close_old_connections, connections
from django.utils import timezone

from classification import paths
from classification.jobs import cleanup, lifecycle
from classification.jobs.child import child_main
from classification.jobs.progress import STOP_CHECK_SECONDS
from classification.jobs.resume_notes import training_job_resume_note
from classification.models import TrainingJob
from core import processes

logger = logging.getLogger(__name__)

S = TrainingJob.Status
P = TrainingJob.Phase
POLL_SECONDS = 0.5
# CPU time a child must use between two looks to count as running (not frozen): well above the
# clock-tick rounding of /proc's figures.
CPU_ALIVE_SECONDS = 0.05
KILL_GRACE_SECONDS = 5.0
STALL_STEP_MULTIPLIER = 10.0
# A phase's own pace: no progress for this many times the longest gap between two of its
# progress reports seen so far (in this phase) is a stall. A phase that reports every few
# seconds keeps the floor; one whose healthy gaps are long (a search's slow trial) gets room.
STALL_GAP_MULTIPLIER = 3.0
# A cancelled child stops at its next step boundary and saves one checkpoint there. It gets
# twice that (steps vary; a save shares the disk) before it is killed, never less than
# CANCEL_GRACE_SECONDS. A fixed 30 s killed BERT-base on a 2-core machine mid-save.
CANCEL_MARGIN = 2.0
# Until a save has been timed, its time is estimated from the checkpoint's size at a rate a
# slow laptop disk still reaches (torch.save included).
ASSUMED_SAVE_BYTES_PER_SECOND = 50e6
SAVE_TIMES_READ_EVERY = 2.0  # while a cancel is pending: a save finishing meanwhile is measured
PHASE_WORDS = {
    P.PREPARING: "preparing",
    P.LOADING_MODEL: "model loading",
    P.DOWNLOADING: "model download",
    P.TOKENIZING: "tokenizing",
    P.TRAINING: "training",
    P.EVALUATING: "evaluating",
    P.SAVING: "saving",
}
WATCHED = ("status", "phase", "heartbeat_at", "progress_at", "current_step", "total_steps",
           "current_epoch", "total_epochs", "cancel_requested")


@dataclass
class StallWatch:
    """Remembers when heartbeat and progress last changed, and how long steps take."""

    heartbeat_timeout: float
    floor: float
    ceiling: float
    now: float
    heartbeat: object = None
    heartbeat_changed: float = 0.0
    cpu: float | None = None
    cpu_changed: float = 0.0
    progress: object = None
    progress_changed: float = 0.0
    step: int | None = None
    step_seen: float = 0.0
    step_times: deque = field(default_factory=lambda: deque(maxlen=50))
    row: dict = field(default_factory=dict)
    # The longest gap between two progress reports seen in each phase.
    phase_gaps: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Until the child's first write, the clocks run from the spawn.
        self.heartbeat_changed = self.progress_changed = self.cpu_changed = self.now

    def observe(self, row: dict, now: float) -> None:
        self.row = row
        if row["heartbeat_at"] != self.heartbeat:
            self.heartbeat, self.heartbeat_changed = row["heartbeat_at"], now
        signature = (row["phase"], row["current_step"], row["progress_at"])
        if signature != self.progress:
            if self.progress is not None:
                # The gap belongs to the phase it was spent in (the one that just reported).
                phase = self.progress[0]
                gap = now - self.progress_changed
                self.phase_gaps[phase] = max(self.phase_gaps.get(phase, 0.0), gap)
            self.progress, self.progress_changed = signature, now
        step = row["current_step"]
        if row["phase"] == P.TRAINING and step != self.step:
            if self.step is not None and step > self.step:
                self.step_times.append((now - self.step_seen) / (step - self.step))
            self.step, self.step_seen = step, now

    def observe_cpu(self, seconds: float | None, now: float) -> None:
        """The child's CPU time. A process the OS keeps running is not frozen, though its
        heartbeat thread may not write: a long import holds the GIL in C code, and on a loaded
        machine (measured: 30 s to import transformers.trainer at nice 10 beside busy
        processes) that outlasts the heartbeat timeout. A frozen (SIGSTOPped) or blocked
        process uses none; one spinning without progress is left to the progress timeout."""
        if seconds is None:
            return
        if self.cpu is None or seconds - self.cpu >= CPU_ALIVE_SECONDS:
            if self.cpu is not None:
                self.cpu_changed = now
            self.cpu = seconds

    def per_step(self) -> float | None:
        return statistics.median(self.step_times) if self.step_times else None

    def evaluation_allowance(self, per_step: float) -> float:
        # Evaluation reports nothing until it ends; it costs at most about an epoch's steps.
        epochs = max(1, int(self.row.get("total_epochs") or 1))
        return per_step * (self.row.get("total_steps") or 0) / epochs

    def progress_timeout(self) -> float:
        """From the phase's own measured pace, within [floor, ceiling]: STALL_GAP_MULTIPLIER x
        the longest gap between its progress reports so far, and in training 10x the median
        step time (an evaluation also gets about an epoch's steps)."""
        phase = self.row.get("phase")
        limit = STALL_GAP_MULTIPLIER * self.phase_gaps.get(phase, 0.0)
        per_step = self.per_step()
        if per_step is not None and phase in (P.TRAINING, P.EVALUATING):
            limit = max(limit, STALL_STEP_MULTIPLIER * per_step)
            if phase == P.EVALUATING:
                limit = max(limit, self.evaluation_allowance(per_step))
        return min(self.ceiling, max(self.floor, limit))

    def cancel_grace(self, *, floor: float, save_seconds: float | None) -> float:
        """How long a cancelled child may take to stop: finish its step, save one checkpoint.

        Twice (step + save), plus the child's cancel check and our poll, at least `floor`. The
        final evaluation on the test split cannot stop midway, so in an evaluating phase the
        child also gets the time an evaluation takes.
        """
        per_step = self.per_step() or 0.0
        needed = CANCEL_MARGIN * (per_step + (save_seconds or 0.0))
        needed += STOP_CHECK_SECONDS + 2 * POLL_SECONDS
        if self.row.get("phase") == P.EVALUATING and per_step:
            needed += min(self.ceiling, self.evaluation_allowance(per_step))
        return max(floor, needed)

    def where(self) -> str:
        phase = self.row.get("phase", "")
        words = PHASE_WORDS.get(phase, str(phase))
        if phase == P.TRAINING and self.row.get("total_steps"):
            words += (
                f" (epoch {self.row['current_epoch']:.2f} of {self.row['total_epochs']}, "
                f"step {self.row['current_step']} of {self.row['total_steps']})"
            )
        return words

    def verdict(self, now: float) -> str:
        silent = now - self.heartbeat_changed
        idle = now - self.cpu_changed
        if min(silent, idle) > self.heartbeat_timeout:
            return (
                f"stalled in {self.where()}: no heartbeat for {silent:.0f} s "
                f"(limit {self.heartbeat_timeout:.0f} s) and no CPU used for {idle:.0f} s; the "
                "training process was frozen and has been stopped"
            )
        still = now - self.progress_changed
        limit = self.progress_timeout()
        if still > limit:
            return (
                f"stalled in {self.where()}: no progress for {still:.0f} s "
                f"(limit {limit:.0f} s) while the process was alive (a deadlock or hang); "
                "it has been stopped"
            )
        return ""


def checkpoint_save_seconds(history: list[dict]) -> float | None:
    """How long one checkpoint save takes, from the "checkpoint" points the child writes.

    The slowest of the last three measured saves; before any, the checkpoint's size at
    ASSUMED_SAVE_BYTES_PER_SECOND; None when the child has said nothing (not a transformer).
    """
    points = [p for p in history or [] if isinstance(p, dict) and p.get("kind") == "checkpoint"]
    measured = [float(p["seconds"]) for p in points if p.get("seconds") is not None]
    if measured:
        return max(measured[-3:])
    sizes = [int(p["bytes"]) for p in points if p.get("bytes")]
    return sizes[-1] / ASSUMED_SAVE_BYTES_PER_SECOND if sizes else None


class Supervisor:
    def __init__(self, job: TrainingJob) -> None:
        self.job_id = job.pk
        self.proc: multiprocessing.process.BaseProcess | None = None
        self.save_seconds: float | None = None
        self.save_seconds_read = -SAVE_TIMES_READ_EVERY

    def _save_seconds(self, now: float) -> float | None:
        # metrics_history can be large: read only while a cancel is pending, every few seconds.
        if now - self.save_seconds_read >= SAVE_TIMES_READ_EVERY:
            self.save_seconds_read = now
            try:
                history = TrainingJob.objects.filter(pk=self.job_id).values_list(
                    "metrics_history", flat=True
                ).first()
            except DatabaseError:
                close_old_connections()
            else:
                self.save_seconds = checkpoint_save_seconds(history or [])
        return self.save_seconds

    def _row(self) -> dict | None:
        try:
            return TrainingJob.objects.filter(pk=self.job_id).values(*WATCHED).first()
        except DatabaseError as exc:
            logger.warning("job %s: supervisor could not read the row: %s", self.job_id, exc)
            close_old_connections()
            return {}

    def _end(self, target: str, reason: str) -> None:
        assert self.proc is not None
        # Kill first, then mark: once the process is gone the checkpoints on disk are final, so
        # the reason names the newest complete one rather than guessing. Should the child end
        # the job itself meanwhile (it honoured the cancel after all), its own transition wins
        # and this one changes nothing.
        processes.stop_process(self.proc, grace=3.0)
        checkpoint = paths.latest_checkpoint(paths.job_output_dir(self.job_id)) or ""
        lifecycle.training_job_finish(
            job_id=self.job_id, target=target,
            reason=f"{reason}; {training_job_resume_note(job_id=self.job_id)}",
            checkpoint_path=checkpoint,
        )

    def run(self) -> None:
        # The child opens its own connections; never hand it (or keep across the spawn) ours.
        connections.close_all()
        ctx = multiprocessing.get_context("spawn")
        self.proc = ctx.Process(
            target=child_main, args=(self.job_id, os.getpid()),
            name=f"medlitbot-train-{self.job_id}", daemon=True,
        )
        started = time.monotonic()
        self.proc.start()
        TrainingJob.objects.filter(pk=self.job_id).update(child_pid=self.proc.pid)
        logger.info("job %s: training process %s spawned", self.job_id, self.proc.pid)
        try:
            self._watch(started)
        finally:
            if self.proc.is_alive():
                processes.stop_process(self.proc, grace=3.0)
            self._after_exit()
            try:
                # Every job folder on this node, not only this job's: a training node never
                # runs beat's maintenance, and a job resumed on another node left its folder.
                cleanup.training_job_dirs_sweep()
            except Exception:  # disk hygiene must never cost the job its recorded end
                logger.exception("job %s: pruning checkpoints failed", self.job_id)

    def _watch(self, started: float) -> None:
        assert self.proc is not None
        watch = StallWatch(
            heartbeat_timeout=float(settings.HEARTBEAT_TIMEOUT),
            floor=float(settings.STALL_TIMEOUT_FLOOR),
            ceiling=float(settings.STALL_TIMEOUT_CEILING),
            now=started,
        )
        cancel_seen: float | None = None
        floor = float(settings.CANCEL_GRACE_SECONDS)
        hard_limit = float(settings.JOB_HARD_TIME_LIMIT)
        while True:
            self.proc.join(POLL_SECONDS)
            if not self.proc.is_alive():
                return
            row = self._row()
            now = time.monotonic()
            if row is None:  # the job was deleted under us
                processes.stop_process(self.proc, grace=3.0)
                return
            if not row:
                continue
            if row["status"] != S.RUNNING:
                # Someone else ended it (the child itself, cleanup): let the child finish exiting.
                self.proc.join(KILL_GRACE_SECONDS)
                processes.stop_process(self.proc, grace=3.0)
                return
            watch.observe(row, now)
            watch.observe_cpu(processes.cpu_seconds(self.proc.pid), now)
            if row["cancel_requested"]:
                cancel_seen = cancel_seen or now
                save = self._save_seconds(now)
                grace = watch.cancel_grace(floor=floor, save_seconds=save)
                if now - cancel_seen > grace:
                    per_step = watch.per_step()
                    allowed = (
                        f"one step of ~{per_step:.1f} s and a checkpoint save of "
                        f"~{save or 0.0:.1f} s, twice over"
                        if per_step
                        else "no step timed yet"
                    )
                    self._end(
                        S.CANCELLED,
                        f"Cancelled: the training process ignored the request for {grace:.0f} s "
                        f"in {watch.where()} ({allowed}; CANCEL_GRACE_SECONDS={floor:.0f} s is "
                        "the least it gets) and was killed",
                    )
                    return
                continue  # cancelling: the grace period, not the stall clock, applies
            if verdict := watch.verdict(now):
                self._end(S.STALLED, verdict[0].upper() + verdict[1:])
                return
            if now - started > hard_limit:
                self._end(
                    S.FAILED,
                    f"Failed: hit the hard time limit of {hard_limit:.0f} s (JOB_HARD_TIME_LIMIT) "
                    f"in {watch.where()}",
                )
                return

    def _after_exit(self) -> None:
        """The child is gone; if the row still says running, say why in plain words."""
        assert self.proc is not None
        self.proc.join(10)
        code = self.proc.exitcode
        status = TrainingJob.objects.filter(pk=self.job_id).values_list("status", flat=True).first()
        if status == S.RUNNING:
            rows = TrainingJob.objects.filter(pk=self.job_id)
            tail = rows.values_list("log_tail", flat=True).first()
            last = (tail or "").strip().splitlines()[-1:] or [""]
            reason = processes.describe_exit(code)
            note = training_job_resume_note(job_id=self.job_id)
            reason = reason[0].upper() + reason[1:] + f"; {note}"
            if last[0]:
                reason += f". Last log line: {last[0]}"
            lifecycle.training_job_finish(
                job_id=self.job_id, target=S.FAILED, reason=reason,
                checkpoint_path=paths.latest_checkpoint(paths.job_output_dir(self.job_id)) or "",
            )
        logger.info("job %s: training process exited with %s", self.job_id, code)


def training_job_run(*, job_id: int) -> None:
    """Claim the job (queued -> running, exactly once) and supervise its training to the end."""
    job = TrainingJob.objects.select_related("ml_model__dataset").filter(pk=job_id).first()
    if job is None:
        logger.warning("training_job_run: job %s does not exist", job_id)
        return
    if job.status == S.QUEUED and (problem := lifecycle.startup_problem(job)):
        lifecycle.training_job_fail_to_start(job=job, reason=problem)
        return
    if not lifecycle.training_job_claim(job=job):
        logger.info("job %s is %s, not queued: this delivery does nothing", job_id, job.status)
        return
    logger.info("job %s claimed by pid %s at %s", job_id, os.getpid(), timezone.now())
    Supervisor(job).run()
