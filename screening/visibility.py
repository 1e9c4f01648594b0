"""Who sees what of a screening session (issue 35: blind means blind); what a record says about
itself wherever it is shown is screening.identity's, read here too by pages and exports.

projects.policy.screening_sight decides from the role and whether the session is blind; these
reads apply it, so every page, export and API answer filters decisions the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from projects import policy
from screening import selectors
from screening.identity import record_identity, record_title_shown  # noqa: F401 (read here)
from screening.models import Decision, ScreeningSession, Stage


@dataclass(frozen=True)
class Sight:
    """What one person sees of a session's decisions: a policy.ScreeningSight and who they are."""

    mode: str
    user_id: int | None = None

    def decision_shown(self, decision: Decision) -> bool:
        return (self.mode == policy.ScreeningSight.ALL
                or (self.mode == policy.ScreeningSight.OWN
                    and decision.reviewer_id == self.user_id))

    @property
    def finals_shown(self) -> bool:
        return self.mode != policy.ScreeningSight.OWN

    @property
    def notes_shown(self) -> bool:
        """A resolution's note may quote the reviewers: only for those who see everything."""
        return self.mode == policy.ScreeningSight.ALL


# Management commands and tests that export for the record keeper (a maintainer's view).
SIGHT_ALL = Sight(mode=policy.ScreeningSight.ALL)


def session_is_blind(*, session: ScreeningSession) -> bool:
    """Blinding means something only while two reviewers read each record."""
    return bool(session.blind) and session.reviewers_per_record >= 2


def session_sight(*, user: Any, session: ScreeningSession) -> Sight:
    role = policy.role_of(user=user, project=session.project_id)
    return Sight(mode=policy.screening_sight(role=role, blind=session_is_blind(session=session)),
                 user_id=getattr(user, "pk", None))


def progress_for(*, user: Any, session: ScreeningSession) -> dict[str, int]:
    """The screen page's counts as this person may read them (selectors.screen_progress)."""
    own = session_sight(user=user, session=session).mode == policy.ScreeningSight.OWN
    return selectors.screen_progress(user=user, session=session, by_reading=own)


HIDDEN_WHILE_BLIND = "hidden from reviewers while blind"


def summary_for(*, user: Any, session: ScreeningSession,
                summary: dict[str, Any]) -> dict[str, Any]:
    """The session summary (page, poll and API) as this person may read it.

    Every figure drawn from final values or from pairs of decisions - records done, conflicts,
    percent agreement and kappa, the stopping test's relevant counts and the panel's advice -
    changes the moment a blind reviewer's answer meets the other's, so read just after their
    own decision it says whether the other agreed. A blind reviewer gets instead the records
    read by every reviewer, and per label how many were read twice; the rest is None, [] or
    HIDDEN_WHILE_BLIND. Viewers and those who see everything get the summary unchanged.
    """
    if session_sight(user=user, session=session).mode != policy.ScreeningSight.OWN:
        return summary
    read = selectors.records_read_by_all(session=session)
    return {**summary, "done": read, "remaining": summary["records"] - read,
            "conflicts": None, "stopping": [], "stopping_panel": None,
            "agreement": [{"label": row["label"], "n": row["n"], "percent_agreement": None,
                           "kappa": None, "kappa_low": None, "kappa_high": None,
                           "kappa_display": HIDDEN_WHILE_BLIND}
                          for row in summary["agreement"]]}


def conflicts_visible(*, user: Any, session: ScreeningSession) -> bool:
    return policy.screening_conflicts_visible(
        role=policy.role_of(user=user, project=session.project_id),
        blind=session_is_blind(session=session))


def conflicts_for(*, user: Any, session: ScreeningSession) -> list[dict[str, Any]]:
    """The open conflicts, each with its record's identity; RoleRequired (403) for someone who
    may not see them (a reviewer or viewer while the session is blind)."""
    if not conflicts_visible(user=user, session=session):
        policy.require(user=user, action=policy.Action.RESOLVE_CONFLICTS, obj=session)
    conflicts = [{**c, "stage": Stage.TITLE_ABSTRACT}
                 for c in selectors.conflicts_list(session=session)]
    conflicts += selectors.fulltext_conflicts(session=session)
    for conflict in conflicts:
        conflict["identity"] = record_identity(record=conflict["record"])
    return conflicts

