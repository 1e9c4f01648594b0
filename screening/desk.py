"""The review desk's settings for a session: eligibility criteria, highlighted terms, exclusion
reasons and who screens it. A maintainer writes the first three; who screens is the session
creator's choice (or an owner's: projects.policy.CREATOR_IN). The screen page reads them."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from projects import policy
from projects.models import ROLE_RANK, Membership
from projects.services import activity_record
from screening.errors import ScreeningError
from screening.highlight import terms_clean
from screening.models import ScreeningSession

MAX_CRITERIA = 20_000
MAX_REASONS = 30


def reasons_clean(reasons: list[str] | str) -> list[str]:
    """One exclusion reason a line (or list item), each at most 200 characters, kept once."""
    if isinstance(reasons, str):
        reasons = reasons.splitlines()
    seen: list[str] = []
    for reason in reasons:
        reason = " ".join(str(reason).split())[:200]
        if reason and reason not in seen:
            seen.append(reason)
    return seen[:MAX_REASONS]


def screener_choices(*, session: ScreeningSession) -> Any:
    """The project's members who may screen (reviewer role and above), by name."""
    roles = [role for role in ROLE_RANK
             if policy.allows(role, policy.Action.SCREEN)]
    return (Membership.objects.filter(project_id=session.project_id, role__in=roles)
            .select_related("user").order_by("user__username"))


def session_desk_update(*, user: Any, session: ScreeningSession, criteria: str,
                        include_terms: list[str] | str, exclude_terms: list[str] | str,
                        exclusion_reasons: list[str] | str,
                        screeners: list[Any]) -> ScreeningSession:
    """Keep the session's criteria, terms, reasons and screeners (empty: every reviewer).

    A screener must be a member with the reviewer role or above: someone who cannot screen
    would be a name on the list that nobody can act for. Another maintainer may save the rest
    with the screeners as they are; changing them is the creator's (NotCreator otherwise).
    """
    policy.require(user=user, action=policy.Action.MANAGE_SCREENING, obj=session)
    if {p.pk for p in screeners} != set(session.screeners.values_list("pk", flat=True)):
        policy.require(user=user, action=policy.Action.CHOOSE_SCREENERS, obj=session)
    allowed = {m.user_id for m in screener_choices(session=session)}
    outside = [p.get_username() for p in screeners if p.pk not in allowed]
    if outside:
        raise ScreeningError(f"{', '.join(outside)} cannot screen in this project (a screener "
                             "needs the reviewer role or above).")
    with transaction.atomic():
        session.criteria = str(criteria or "")[:MAX_CRITERIA]
        session.include_terms = terms_clean(include_terms)
        session.exclude_terms = terms_clean(exclude_terms)
        session.exclusion_reasons = reasons_clean(exclusion_reasons)
        session.save(update_fields=["criteria", "include_terms", "exclude_terms",
                                    "exclusion_reasons"])
        session.screeners.set(screeners)
        names = ", ".join(p.get_username() for p in screeners) or "every reviewer"
        activity_record(project=session.project_id, actor=user, verb="screening_desk",
                        subject=session, summary=f"{user.get_username()} set the criteria, "
                        f"terms and exclusion reasons of “{session.name}”; screeners: {names}")
    return session
