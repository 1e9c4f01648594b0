"""What an import's row keeps of its restarts, and the sentence its page and the API show.

The maintenance sweep (import_maintenance) queues again an import whose worker stopped or whose
message the broker lost. Its message is overwritten by the next run's progress, so each restart
is kept in options["restarts"] (when, why) and the note is built from them.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone

RESTARTS = "restarts"
WORKER_STOPPED = "its worker stopped"
MESSAGE_LOST = "the job queue lost its message"


def import_restart_options(*, options: dict[str, Any], cause: str,
                           why: str) -> dict[str, Any]:
    """`options` with one more restart recorded: its `cause` (WORKER_STOPPED or MESSAGE_LOST)
    and `why` in plain words, which starts with it ("its worker stopped (killed...) after...")."""
    restarts = [*(options.get(RESTARTS) or []),
                {"cause": cause, "why": why, "at": timezone.now().isoformat()}]
    return {**options, RESTARTS: restarts}


def import_restart_note(*, job: Any) -> str:
    """ "" for an import that never restarted; else "Restarted after its worker stopped
    (...) (attempt 2); its upload was kept.": why it last restarted, and the attempt since."""
    restarts = (job.options or {}).get(RESTARTS) or []
    if not restarts:
        return ""
    return (f"Restarted after {restarts[-1]['why']} (attempt {len(restarts) + 1}); its upload "
            "was kept.")
