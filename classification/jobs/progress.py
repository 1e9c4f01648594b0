"""Turning the engine's progress events into throttled job-row writes (child side)."""

from __future__ import annotations

import logging
import statistics
import threading
import time
from collections import deque
from typing import Any

from django.db import DatabaseError, close_old_connections, connection
from django.utils import timezone

from classification import faults
from classification.models import TrainingJob

logger = logging.getLogger(__name__)

S = TrainingJob.Status
P = TrainingJob.Phase
# Where the bar starts in each phase. Training fills TRAINING_BAND by step / total_steps; the
# evaluations Trainer runs between epochs are part of training and leave the bar where it is
# (jumping to the final evaluation's share there froze the bar at 90% for the later epochs).
# After the last step, the final evaluation (threshold tuning, then the test split) and the
# save each get their own share, and only the verified, completed job is at 100%.
PHASE_START = {
    P.PREPARING: 0.0,
    P.LOADING_MODEL: 2.0,
    P.DOWNLOADING: 2.0,
    P.TOKENIZING: 5.0,
    P.TRAINING: 8.0,
    P.SAVING: 96.0,
    P.DONE: 100.0,
}
TRAINING_BAND = (8.0, 90.0)
FINAL_TUNING = 90.0  # the engine's last evaluation on validation, after the last step
FINAL_TEST = 93.0  # run_training's evaluation on the test split
VERIFYING = 99.0  # the saved artifact is loaded back and asked for one prediction
LOG_LINES = 60
HISTORY_POINTS = 2000
# How often should_stop() reads the row: the cancel is honoured at the first step boundary
# after this much of a delay, and one indexed read four times a second costs nothing.
STOP_CHECK_SECONDS = 0.25


def training_percent(step: int, total_steps: int) -> float:
    low, high = TRAINING_BAND
    return low + (high - low) * min(1.0, step / total_steps) if total_steps else low


class ProgressWriter:
    """progress_cb/should_stop for the engine; writes at most once per `interval` seconds.

    Every write is fenced on status=running, so a job the supervisor already ended is never
    written again, and should_stop() tells the engine to stop when that happens.
    """

    def __init__(self, job: TrainingJob, *, interval: float) -> None:
        self.job_id = job.pk
        self.interval = interval
        self.phase = job.phase
        self.percent = 0.0
        self.step = 0
        self.total_steps = 0
        self.epoch = 0.0
        self.total_epochs = job.total_epochs
        self.history: list[dict[str, Any]] = list(job.metrics_history or [])
        self.log: deque[str] = deque(job.log_tail.splitlines(), maxlen=LOG_LINES)
        self.pending: dict[str, Any] = {}
        self.last_write = 0.0
        self.step_times: deque[float] = deque(maxlen=50)
        self.last_step_seen: tuple[int, float] | None = None
        self.stop_cached = False
        self.stop_checked = 0.0
        self.lost = False  # the row is no longer running: someone ended this job
        self.lock = threading.Lock()
        self.checkpoint_bytes: int | None = None
        self.fault_step = 0  # the last step the step faults ran for (once per step)

    # ---- writes ---------------------------------------------------------------------------

    def line(self, text: str) -> None:
        stamp = timezone.localtime().strftime("%H:%M:%S")
        self.log.append(f"{stamp} {text}")
        self.pending["log_tail"] = "\n".join(self.log)

    def advance(self, percent: float) -> None:
        """Move the bar to `percent`, never back."""
        if percent > self.percent:
            self.percent = percent
            self.pending["progress_percentage"] = round(self.percent, 2)

    def start_at_checkpoint(self, *, step: int, total_steps: int) -> None:
        """A resumed attempt starts with the bar where its checkpoint left the training."""
        self.advance(training_percent(step, total_steps))

    def set_phase(self, phase: str, message: str = "", *, percent: float | None = None) -> None:
        """Enter `phase` (or stay in it) and move the bar to where it starts, or to `percent`.

        An evaluating phase moves the bar only with an explicit percent: between epochs it is
        part of training, and the final evaluation says where it stands.
        """
        if phase != self.phase:
            self.phase = phase
            self.pending["phase"] = phase
            self.line(f"[{phase}] {message}" if message else f"[{phase}]")
            if percent is None:
                percent = PHASE_START.get(phase)
        elif message:
            self.line(message)
        if percent is not None:
            self.advance(percent)

    def update(self, **fields: Any) -> None:
        self.pending.update(fields)

    def flush(self, *, force: bool = False) -> bool:
        if not self.pending:
            return not self.lost
        now = time.monotonic()
        if not force and now - self.last_write < self.interval:
            return not self.lost
        with self.lock:
            fields, self.pending = self.pending, {}
            stamp = timezone.now()
            try:
                changed = TrainingJob.objects.filter(pk=self.job_id, status=S.RUNNING).update(
                    progress_at=stamp, updated_at=stamp, **fields
                )
            except DatabaseError as exc:
                # A progress write must never kill a training: keep the fields for next time.
                logger.warning("job %s: progress write failed (%s); will retry", self.job_id, exc)
                self.pending = {**fields, **self.pending}
                return True
            self.last_write = now
            if changed == 0:
                self.lost = True
        return not self.lost

    # ---- engine callbacks -----------------------------------------------------------------

    def progress_cb(self, event: dict[str, Any]) -> None:
        phase = event.get("phase") or self.phase
        message = str(event.get("message") or "")
        if phase == P.LOADING_MODEL and message.startswith("Downloading"):
            phase = P.DOWNLOADING
        phase_changed = phase != self.phase
        # The engine's last evaluation reports no step; the ones between epochs do.
        final = phase == P.EVALUATING and event.get("step") is None
        self.set_phase(phase, message, percent=FINAL_TUNING if final else None)
        self._steps(event)
        saving = self._checkpoint(event)
        metrics = event.get("metrics") or {}
        if metrics:
            clean = {k: float(v) for k, v in metrics.items() if isinstance(v, (int, float))}
            self.history.append({"kind": "eval", "step": self.step, "epoch": self.epoch, **clean})
            shown = ", ".join(f"{k}={v:.3f}" for k, v in clean.items() if "f1" in k or k == "loss")
            self.line(f"eval at epoch {self.epoch:.2f}: {shown}")
        if event.get("loss") is not None and "learning_rate" in event:
            self.history.append(
                {
                    "kind": "loss",
                    "step": self.step,
                    "epoch": self.epoch,
                    "loss": float(event["loss"]),
                    "learning_rate": float(event.get("learning_rate") or 0.0),
                }
            )
        if metrics or "learning_rate" in event:
            self.pending["metrics_history"] = self.history[-HISTORY_POINTS:]
        if event.get("leaderboard") is not None:
            self.pending["leaderboard"] = event["leaderboard"]
        self.flush(force=phase_changed or bool(metrics) or saving is not None
                   or "leaderboard" in event)
        # Fault points (no-ops unless the test settings switch them on).
        if phase in (P.LOADING_MODEL, P.DOWNLOADING):
            faults.maybe_hang("loading")
        elif saving:
            faults.save_delay()  # inside the engine's timed save: it counts as save time
        elif phase == P.TRAINING and self.step >= 1 and self.step != self.fault_step:
            # Once per step: the loss and checkpoint events of a step are not more steps.
            self.fault_step = self.step
            if faults.active_faults():
                # A real deadlock strikes after the last step was reported; without this the
                # throttle could leave step 1 unwritten and the hang would look like loading.
                self.flush(force=True)
            faults.maybe_hang("step")
            faults.step_delay()

    def _checkpoint(self, event: dict[str, Any]) -> bool | None:
        """Checkpoint events: True when a save starts, False when one ended, else None.

        Each save's measured time goes into metrics_history as a "checkpoint" point (the charts
        skip that kind): the supervisor reads it to know how long a cancelled job may take.
        """
        if event.get("checkpoint_bytes"):
            self.checkpoint_bytes = int(event["checkpoint_bytes"])
            self.history.append(
                {"kind": "checkpoint", "step": self.step, "bytes": self.checkpoint_bytes}
            )
            self.pending["metrics_history"] = self.history[-HISTORY_POINTS:]
        if event.get("checkpoint_saving"):
            self.line(f"saving {event['checkpoint_saving']}")
            return True
        if not event.get("checkpoint_path"):
            return None
        path = str(event["checkpoint_path"])
        self.pending["checkpoint_path"] = path
        seconds = event.get("checkpoint_seconds")
        if seconds is None:
            return False
        name = path.rstrip("/").rsplit("/", 1)[-1]
        self.history.append(
            {
                "kind": "checkpoint",
                "step": self.step,
                "epoch": self.epoch,
                "path": name,
                "seconds": round(float(seconds), 3),
                "bytes": self.checkpoint_bytes,
            }
        )
        self.pending["metrics_history"] = self.history[-HISTORY_POINTS:]
        self.line(f"{name} saved in {float(seconds):.1f} s")
        return False

    def _steps(self, event: dict[str, Any]) -> None:
        if event.get("total_epochs") is not None:
            self.total_epochs = round(float(event["total_epochs"]))
            self.pending["total_epochs"] = self.total_epochs
        if event.get("epoch") is not None:
            self.epoch = float(event["epoch"])
            self.pending["current_epoch"] = round(self.epoch, 3)
        if event.get("total_steps"):
            self.total_steps = int(event["total_steps"])
            self.pending["total_steps"] = self.total_steps
        if event.get("loss") is not None:
            self.pending["last_loss"] = float(event["loss"])
        if event.get("step") is None:
            return
        step = int(event["step"])
        now = time.monotonic()
        if self.last_step_seen and step > self.last_step_seen[0]:
            seen_step, seen_at = self.last_step_seen
            self.step_times.append((now - seen_at) / (step - seen_step))
        if not self.last_step_seen or step != self.last_step_seen[0]:
            self.last_step_seen = (step, now)
        self.step = step
        self.pending["current_step"] = step
        if self.total_steps and self.phase == P.TRAINING:
            self.advance(training_percent(step, self.total_steps))
            if self.step_times:
                per_step = statistics.median(self.step_times)
                self.pending["eta_seconds"] = round(per_step * max(0, self.total_steps - step), 1)

    def should_stop(self) -> bool:
        """cancel_requested (or the job no longer running), read every STOP_CHECK_SECONDS."""
        if faults.ignores_cancel():
            return False
        now = time.monotonic()
        if now - self.stop_checked < STOP_CHECK_SECONDS:
            return self.stop_cached or self.lost
        self.stop_checked = now
        try:
            row = TrainingJob.objects.filter(pk=self.job_id).values_list(
                "status", "cancel_requested"
            ).first()
        except DatabaseError:
            return self.stop_cached
        self.stop_cached = row is None or row[0] != S.RUNNING or bool(row[1])
        return self.stop_cached or self.lost


class Heartbeat(threading.Thread):
    """Writes heartbeat_at every `interval` seconds from its own thread (and DB connection).

    It keeps beating while native code holds up the main thread without the GIL, which is why
    the supervisor also watches progress; a frozen process stops beating altogether.
    """

    def __init__(self, job_id: int, *, interval: float) -> None:
        super().__init__(name=f"heartbeat-{job_id}", daemon=True)
        self.job_id = job_id
        self.interval = interval
        self.stopped = threading.Event()

    def beat(self) -> bool:
        try:
            return bool(
                TrainingJob.objects.filter(pk=self.job_id, status=S.RUNNING).update(
                    heartbeat_at=timezone.now()
                )
            )
        except DatabaseError as exc:
            logger.warning("job %s: heartbeat write failed: %s", self.job_id, exc)
            close_old_connections()
            return True

    def run(self) -> None:
        try:
            while self.beat() and not self.stopped.wait(self.interval):
                pass
        finally:
            connection.close()

    def stop(self) -> None:
        self.stopped.set()
