"""Finding running jobs whose training is gone or silent, at worker start and from cron."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from classification.jobs import cleanup, lifecycle
from classification.jobs.resume_notes import training_job_resume_note
from classification.models import StatusChange, TrainingJob
from core import broker, processes, queueing

logger = logging.getLogger(__name__)

S = TrainingJob.Status


@dataclass
class JobCheck:
    job_id: int
    host: str
    worker_pid: int | None
    child_pid: int | None
    heartbeat_age: float | None
    problem: str  # "" when the job looks healthy
    action: str = "ok"
    queued: bool = False  # a queued job whose message is lost, rather than a running one


def _heartbeat_age(job: TrainingJob) -> float | None:
    stamp = job.heartbeat_at or job.started_at
    return None if stamp is None else (timezone.now() - stamp).total_seconds()


def training_jobs_reconcile_on_worker_start() -> list[int]:
    """At worker start: running jobs of this host whose worker is gone become stalled.

    The worker that just started runs nothing yet, so a job recorded with its own PID is stale
    (PID reuse), and so is one whose PID is dead or now belongs to some other program. A live
    MedLitBot worker on the same host keeps its job.
    """
    me, host, stalled = os.getpid(), processes.hostname(), []
    for job in TrainingJob.objects.filter(status=S.RUNNING, worker_host=host):
        pid = job.worker_pid
        if pid and pid != me and processes.is_our_process(pid):
            continue
        # The orphaned child goes first: only then is the newest checkpoint on disk final.
        if job.child_pid and processes.is_our_process(job.child_pid):
            processes.kill_pid(job.child_pid)
        note = training_job_resume_note(job_id=job.pk)
        reason = (
            f"Stalled: worker restarted; the worker process {pid} on {host} that ran this job "
            f"is gone, and its training process died with it; {note}."
        )
        if lifecycle.training_job_finish(job_id=job.pk, target=S.STALLED, reason=reason):
            stalled.append(job.pk)
            cleanup.training_job_prune_checkpoints(job_id=job.pk)
            training_job_auto_resume(job_id=job.pk, why=f"the worker process {pid} on {host} "
                                                        "that ran it is gone")
    if stalled:
        logger.warning("worker start: marked jobs %s stalled (worker restarted)", stalled)
    return stalled


# How a resume the system made by itself begins its reason (kept in the job's history), so the
# resumes already spent can be counted.
AUTO_RESUME_NOTE = "Resumed by itself"


def training_job_auto_resume(*, job_id: int, why: str) -> str:
    """A stalled job whose worker died, queued again from its latest checkpoint (as a batch's
    shards are) at most TRAINING_AUTO_RESUMES times, each time recorded with `why`; past that it
    stays stalled, its reason saying so. Returns the action taken."""
    limit = settings.TRAINING_AUTO_RESUMES
    spent = StatusChange.objects.filter(job_id=job_id, target=S.QUEUED,
                                        reason__startswith=AUTO_RESUME_NOTE).count()
    job = TrainingJob.objects.filter(pk=job_id, status=S.STALLED).first()
    if job is None:
        return "already resumed or ended"
    if spent >= limit:
        note = (f" Not resumed by itself: its worker died after {spent} automatic resume(s), "
                f"the most TRAINING_AUTO_RESUMES ({limit}) allows.")
        if limit and TrainingJob.objects.filter(pk=job_id, status=S.STALLED,
                                                reason=job.reason).update(
                reason=(job.reason + note)[:4000]):
            return "left stalled (out of automatic resumes)"
        return "left stalled"
    reason = (f"{AUTO_RESUME_NOTE} ({spent + 1} of {limit}) from its latest checkpoint: {why}; "
              "it waits for a worker again.")
    try:
        lifecycle.training_job_resume(job=job, reason=reason)
    except ValueError:
        return "already resumed or ended"
    except queueing.QueueUnavailable:
        return "failed (the job queue is unreachable)"
    logger.warning("training job %s resumed by itself (%s of %s): %s", job_id, spent + 1,
                   limit, why)
    return "resumed by itself"


def training_jobs_check(*, stale_seconds: float, force: bool = False) -> list[JobCheck]:
    """Every running job with what (if anything) is wrong with it; reads only."""
    host = processes.hostname()
    checks = []
    for job in TrainingJob.objects.filter(status=S.RUNNING).order_by("pk"):
        age = _heartbeat_age(job)
        same_host = job.worker_host == host
        problem = ""
        if force:
            problem = "forced cleanup (--force): every running job is treated as stuck"
        elif same_host and not processes.pid_alive(job.worker_pid):
            problem = (
                f"worker process {job.worker_pid} on {host} is gone (worker killed or restarted)"
            )
        elif same_host and job.worker_pid and not processes.is_our_process(job.worker_pid):
            problem = f"PID {job.worker_pid} on {host} now belongs to another program"
        elif age is not None and age > stale_seconds:
            problem = f"no heartbeat for {age / 60:.1f} min (limit {stale_seconds / 60:.1f} min)"
        checks.append(
            JobCheck(job.pk, job.worker_host, job.worker_pid, job.child_pid, age, problem)
        )
    return checks + _lost_queued_jobs(stale_seconds=stale_seconds)


def _lost_queued_jobs(*, stale_seconds: float) -> list[JobCheck]:
    """Queued jobs, waiting longer than the threshold, whose task message the broker lost."""
    cutoff = timezone.now() - timedelta(seconds=stale_seconds)
    checks = []
    for job in TrainingJob.objects.filter(status=S.QUEUED, updated_at__lt=cutoff).order_by("pk"):
        if not job.celery_task_id or broker.broker_holds_task(task_id=job.celery_task_id,
                                                              queue=job.queue):
            continue  # None ("cannot tell") and True both leave the job alone
        waited = (timezone.now() - job.updated_at).total_seconds()
        problem = (
            f"queued {waited / 60:.1f} min ago, but the broker no longer holds its task "
            "message (Redis restarted or was flushed), so no worker will ever start it"
        )
        checks.append(JobCheck(job.pk, "", None, None, None, problem, queued=True))
    return checks


# The note a requeued job carries in its reason while it waits again; a job found lost with it
# already is failed instead, so a message lost over and over is not sent for ever.
REQUEUED_NOTE = "Requeued once: the broker lost its task message"


def training_job_requeue_or_fail(*, job_id: int, problem: str) -> str:
    """A queued job whose message the broker lost: sent again, once, with the same task id and
    the reason recorded on the row; the second time it is failed as before. Returns the action.
    With the broker still unreachable nothing changes: it is judged again next time."""
    job = TrainingJob.objects.filter(pk=job_id, status=S.QUEUED).first()
    if job is None:
        return "already started or ended"
    if job.reason.startswith(REQUEUED_NOTE):
        marked = lifecycle.training_job_fail_to_start(
            job_id=job_id, reason=f"Failed: {problem}, again after it was requeued once. "
                                  "Resume to queue it again (found by cleanup_stuck_training)")
        return "marked failed" if marked else "already started or ended"
    now = timezone.now()
    note = (f"{REQUEUED_NOTE} at {timezone.localtime(now):%Y-%m-%d %H:%M} ({problem}); it "
            "waits for a worker again.")
    # The note first, in one conditional write: a worker that claims the job meanwhile wins.
    # The note stays in the job's log once a worker claims it (which clears the reason).
    log_tail = f"{job.log_tail}\n{note}".strip()
    if not TrainingJob.objects.filter(pk=job_id, status=S.QUEUED).update(
            reason=note, log_tail=log_tail, updated_at=now):
        return "already started or ended"
    try:
        queueing.task_send(name=lifecycle.TRAINING_TASK, args=(job.ml_model_id,),
                           kwargs={"job_id": job.pk}, task_id=job.celery_task_id,
                           queue=job.queue)
    except queueing.QueueUnavailable:
        TrainingJob.objects.filter(pk=job_id, status=S.QUEUED, reason=note).update(reason="")
        return "left queued (the broker is unreachable)"
    logger.warning("training job %s requeued: its broker message was lost", job_id)
    return "requeued (its message was lost)"


def training_jobs_cleanup(
    *, stale_seconds: float, force: bool = False, dry_run: bool = False
) -> list[JobCheck]:
    """Mark stuck running jobs stalled; with force, also end their training processes.

    Only PIDs recorded on this host, and only after psutil confirms they are this user's
    MedLitBot processes, are ever signalled. Running it twice does nothing the second time.
    """
    checks = training_jobs_check(stale_seconds=stale_seconds, force=force)
    host = processes.hostname()
    for check in checks:
        if not check.problem:
            continue
        if dry_run:
            check.action = "would requeue" if check.queued else "would mark stalled"
            continue
        if check.queued:
            check.action = training_job_requeue_or_fail(job_id=check.job_id,
                                                        problem=check.problem)
            continue
        reason = f"Stalled: {check.problem} (found by cleanup_stuck_training)"
        marked = lifecycle.training_job_finish(
            job_id=check.job_id, target=S.STALLED, reason=reason
        )
        check.action = "marked stalled" if marked else "already ended"
        pid = check.child_pid
        # Without force only an orphan (its worker gone) is killed; the live supervisor of a
        # merely silent job stops its own child once it sees the row has moved on.
        worker_gone = not processes.pid_alive(check.worker_pid)
        if pid and check.host == host and (force or worker_gone) and processes.is_our_process(pid):
            killed = processes.kill_pid(pid)
            check.action += (
                f", killed training process {pid}" if killed else f", could not kill {pid}"
            )
        if marked and check.host == host and worker_gone and not force:
            # Its orphaned child is gone too, so the newest checkpoint on disk is final.
            check.action += ", " + training_job_auto_resume(job_id=check.job_id,
                                                            why=check.problem)
    return checks
