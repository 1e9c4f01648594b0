"""manage.py cleanup_stuck_training: end jobs that can make no more progress, with a reason.

Running jobs whose training is gone or silent become stalled (resumable); queued jobs whose task
message the broker lost become failed (resumable too).

Cron-safe: idempotent, exit status 0 when there is nothing to do.
"""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand

from classification import services


class Command(BaseCommand):
    help = (
        "Find running training jobs whose worker is gone or whose heartbeat is stale and mark "
        "them stalled, and queued jobs whose task message the broker lost and mark them failed "
        "(both resumable). --force treats every running job as stuck."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="report, change nothing")
        parser.add_argument(
            "--stale-minutes", type=float, default=None,
            help="heartbeat age that counts as stuck (default: 2 x HEARTBEAT_TIMEOUT)",
        )
        parser.add_argument(
            "--force", action="store_true",
            help="treat every running job as stuck and end its training process (this host only)",
        )

    def handle(self, *args, dry_run: bool, stale_minutes: float | None, force: bool, **options):
        stale = stale_minutes * 60 if stale_minutes is not None else 2 * settings.HEARTBEAT_TIMEOUT
        checks = services.training_jobs_cleanup(stale_seconds=stale, force=force, dry_run=dry_run)
        if not checks:
            self.stdout.write("No running or waiting training jobs to check.")
            return
        header = f"{'job':>5}  {'host':<20} {'worker':>7} {'child':>7} {'heartbeat':>10}  action"
        self.stdout.write(header)
        for c in checks:
            age = "-" if c.heartbeat_age is None else f"{c.heartbeat_age:.0f}s ago"
            self.stdout.write(
                f"{c.job_id:>5}  {c.host[:20]:<20} "
                f"{c.worker_pid or '-':>7} {c.child_pid or '-':>7} "
                f"{age:>10}  {c.action}{': ' + c.problem if c.problem else ''}"
            )
        stuck = sum(1 for c in checks if c.problem)
        verb = "would be marked" if dry_run else "handled"
        self.stdout.write(f"{stuck} stuck job(s) {verb}; {len(checks) - stuck} healthy.")
