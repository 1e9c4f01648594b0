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
# Overall progress bands per phase; training fills its band by step / total_steps.
BANDS = {
    P.PREPARING: (0.0, 2.0),
    P.LOADING_MODEL: (2.0, 5.0),
    P.DOWNLOADING: (2.0, 5.0),
    P.TOKENIZING: (5.0, 8.0),
    P.TRAINING: (8.0, 90.0),
    P.EVALUATING: (90.0, 95.0),
    P.SAVING: (95.0, 99.0),
    P.DONE: (100.0, 100.0),
}
LOG_LINES = 60
HISTORY_POINTS = 2000


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

    # ---- writes ---------------------------------------------------------------------------

    def line(self, text: str) -> None:
        stamp = timezone.localtime().strftime("%H:%M:%S")
        self.log.append(f"{stamp} {text}")
        self.pending["log_tail"] = "\n".join(self.log)

    def set_phase(self, phase: str, message: str = "") -> None:
        if phase != self.phase:
            self.phase = phase
            self.percent = max(self.percent, BANDS.get(phase, (self.percent,))[0])
            self.pending.update(phase=phase, progress_percentage=round(self.percent, 2))
            self.line(f"[{phase}] {message}" if message else f"[{phase}]")
        elif message:
            self.line(message)

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
        self.set_phase(phase, message)
        self._steps(event)
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
        if event.get("checkpoint_path"):
            self.pending["checkpoint_path"] = str(event["checkpoint_path"])
        self.flush(force=phase_changed or bool(metrics))
        # Fault points (no-ops unless the test settings switch them on).
        if phase in (P.LOADING_MODEL, P.DOWNLOADING):
            faults.maybe_hang("loading")
        elif phase == P.TRAINING and self.step >= 1:
            if faults.active_faults():
                # A real deadlock strikes after the last step was reported; without this the
                # throttle could leave step 1 unwritten and the hang would look like loading.
                self.flush(force=True)
            faults.maybe_hang("step")
            faults.step_delay()

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
            low, high = BANDS[P.TRAINING]
            self.percent = max(self.percent, low + (high - low) * min(1.0, step / self.total_steps))
            self.pending["progress_percentage"] = round(self.percent, 2)
            if self.step_times:
                per_step = statistics.median(self.step_times)
                self.pending["eta_seconds"] = round(per_step * max(0, self.total_steps - step), 1)

    def should_stop(self) -> bool:
        """cancel_requested (or the job no longer running), read at most once a second."""
        if faults.ignores_cancel():
            return False
        now = time.monotonic()
        if now - self.stop_checked < 1.0:
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
