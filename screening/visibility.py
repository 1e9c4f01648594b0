"""Who sees what of a screening session (issue 35: blind means blind); what a record says about
itself wherever it is shown is screening.identity's, read here too by pages and exports.

projects.policy.screening_sight decides from the role and whether the session is blind; these
reads apply it, so every page, export and API answer filters decisions the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Q, QuerySet

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

    def tag_shown(self, tagged_by_id: int | None) -> bool:
        return (policy.screening_others_tags_shown(sight=self.mode)
                or tagged_by_id == self.user_id)

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
    """The screen page's counts as this person may read them (selectors.screen_progress).

    A blind reviewer's done and remaining count the records they read themselves: a count of
    records read by every reviewer, or of final values, moves when the other reviewer answers.
    """
    progress = selectors.screen_progress(user=user, session=session)
    if outcomes_shown(user=user, session=session):
        return progress
    return {**progress, "done": progress["mine"],
            "remaining": progress["records"] - progress["mine"]}


def outcomes_shown(*, user: Any, session: ScreeningSession) -> bool:
    return policy.screening_outcomes_shown(sight=session_sight(user=user, session=session).mode)


HIDDEN_WHILE_BLIND = "hidden from reviewers while blind"


def agreement_shown(*, rows: list[dict[str, Any]], sight: Sight) -> list[dict[str, Any]]:
    """The agreement table as `sight` may read it: for a blind reviewer only the labels (the
    records read twice, agreement and kappa all move with the other reviewer's answers)."""
    if policy.screening_outcomes_shown(sight=sight.mode):
        return rows
    return [{"label": row["label"], "n": None, "percent_agreement": None, "kappa": None,
             "kappa_low": None, "kappa_high": None, "kappa_display": HIDDEN_WHILE_BLIND}
            for row in rows]


def stop_justification_shown(*, session: ScreeningSession, sight: Sight) -> dict | None:
    """Who stopped the session and when; for a blind reviewer nothing of the counts or tests
    (records marked no, whether the rule was met), which were drawn from the final values."""
    why = session.stop_justification or None
    if why is None or policy.screening_outcomes_shown(sight=sight.mode):
        return why
    return {"stopped_by": why.get("stopped_by"), "stopped_at": why.get("stopped_at")}


def summary_for(*, user: Any, session: ScreeningSession,
                summary: dict[str, Any]) -> dict[str, Any]:
    """The session summary (page, poll and API) as this person may read it.

    Every figure drawn from final values or from pairs of decisions - records done, conflicts,
    agreement, the stopping test and the panel's advice, the ranking's refreshes (due when
    enough records became final), the stop's counts - changes when the other reviewer answers,
    so read before and after it tells a blind reviewer what was said. A blind reviewer gets
    instead their own records read as done; the rest is None, [] or HIDDEN_WHILE_BLIND.
    Viewers and those who see everything get the summary unchanged.
    """
    sight = session_sight(user=user, session=session)
    if policy.screening_outcomes_shown(sight=sight.mode):
        return summary
    mine = selectors.screen_progress(user=user, session=session)["mine"]
    return {**summary, "done": mine, "remaining": summary["records"] - mine,
            "conflicts": None, "stopping": [], "stopping_panel": None,
            "ranking_refreshed_at": None, "ranker_running": False, "ranker_error": "",
            "ranking": None,
            "stop_justification": stop_justification_shown(session=session, sight=sight),
            "agreement": agreement_shown(rows=summary["agreement"], sight=sight)}


def payload_for(*, user: Any, session: ScreeningSession,
                payload: dict[str, Any]) -> dict[str, Any]:
    """A record as the screen page shows it (selectors.record_payload) to this person: for a
    blind reviewer without `locked`, the labels a maintainer resolved, since a resolution
    tells that the other reviewer disagreed. Changing such an answer is still refused."""
    if outcomes_shown(user=user, session=session):
        return payload
    return {**payload, "locked": []}


# PRISMA's boxes before screening: the import's facts, fixed when the session was made.
PRISMA_OPEN = frozenset({"source", "collection", "identified", "duplicates_removed",
                         "duplicates_note", "removed_other", "removed_without_text", "sources",
                         "records", "stopping_rule",
                         # A maintainer's counts from before import, and what they add up to.
                         "before_import", "removed_for_other_reasons"})


def prisma_shown(*, counts: dict[str, Any], sight: Sight) -> dict[str, Any]:
    """PRISMA counts (screening.prisma) as `sight` may read them: for a blind reviewer every
    box after identification is None (screened, excluded and reports sought follow the final
    values), per label nothing, and `hidden_while_blind` says so."""
    if policy.screening_outcomes_shown(sight=sight.mode):
        return counts
    shown: dict[str, Any] = {key: (value if key in PRISMA_OPEN else None)
                             for key, value in counts.items()}
    return {**shown, "per_label": {}, "reports_excluded_by_reason": {},
            "hidden_while_blind": HIDDEN_WHILE_BLIND}


def fulltext_open(*, user: Any, session: ScreeningSession) -> bool:
    return policy.screening_fulltext_open(
        sight=session_sight(user=user, session=session).mode,
        stopped=session.phase == ScreeningSession.Phase.STOPPED)


def fulltext_require_open(*, user: Any, session: ScreeningSession) -> None:
    """policy.FullTextClosed (403 with its sentence) for a blind reviewer before the stop."""
    if not fulltext_open(user=user, session=session):
        raise policy.FullTextClosed()


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


def activity_narrow(rows: QuerySet, *, user: Any, project: Any) -> QuerySet:
    """The project's log without what the user's sight of each blind session may not read
    (policy.screening_activity_hidden): a blind reviewer keeps their own lines and those that
    say nothing of a decision; a viewer loses the resolutions. Registered in ScreeningConfig."""
    blind = [str(pk) for pk in ScreeningSession.objects.filter(
        project=project, blind=True, reviewers_per_record__gte=2).values_list("pk", flat=True)]
    if not blind:
        return rows
    sight = policy.screening_sight(role=policy.role_of(user=user, project=project), blind=True)
    hidden = policy.screening_activity_hidden(sight=sight)
    if hidden is not None and not hidden:
        return rows
    # A line the system wrote (actor None) is someone else's too.
    others = (Q(subject_type=ScreeningSession._meta.model_name, subject_id__in=blind)
              & ~Q(actor_id=getattr(user, "pk", None)))
    if hidden is None:
        return rows.exclude(others & ~Q(verb__in=policy.SCREENING_ACTIVITY_OPEN))
    return rows.exclude(others & Q(verb__in=hidden))

