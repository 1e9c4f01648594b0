"""A person's signed-in sessions, and what ends them with their API tokens.

Credentials die with the password: whenever a password is set (the password-change page, a
reset link, the admin, `manage.py changepassword`), every API token of that user is revoked and
every browser session of theirs is ended. The page that changed it keeps its own session:
Django's update_session_auth_hash gives it a new key with the same data. (Django already
refuses a session whose password hash went stale; ending them here also empties the list.)

Sessions are listed from api.models.UserSession, written at each login (user_logged_in) and
when the tokens page is opened (a session whose key changed since it logged in).
"""

from __future__ import annotations

import logging
from importlib import import_module
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model, user_logged_in, user_logged_out
from django.db import transaction
from django.db.models.signals import post_save
from django.dispatch import receiver
from django.http import Http404, HttpRequest
from django.utils import timezone

from api.models import ApiToken, UserSession
from core.clientaddress import client_address

logger = logging.getLogger(__name__)


def _store(session_key: str | None = None) -> Any:
    return import_module(settings.SESSION_ENGINE).SessionStore(session_key=session_key)


# --- Writes ---------------------------------------------------------------------------------------


def session_track(*, request: HttpRequest, user: Any = None) -> None:
    """Record the request's session as one of `user`'s (the request's by default), once per
    session key."""
    key = request.session.session_key
    user = user if user is not None else getattr(request, "user", None)
    if not key or user is None or not user.is_authenticated:
        return
    UserSession.objects.get_or_create(session_key=key, defaults={
        "user_id": user.pk, "address": client_address(request)[:45],
        "user_agent": request.META.get("HTTP_USER_AGENT", "")[:200]})


def session_end(*, user: Any, pk: Any) -> UserSession:
    """End one of the user's sessions (any browser, this one included); 404 for another's."""
    row = UserSession.objects.filter(user_id=user.pk, pk=pk).first() if str(pk).isdigit() else None
    if row is None:
        raise Http404("No such session.")
    _store().delete(row.session_key)
    row.delete()
    return row


def credentials_revoke(*, user: Any, by: Any, why: str, keep_session_key: str = "") -> str:
    """Revoke every API token of `user` and end every session of theirs but `keep_session_key`;
    one line in their personal project's log (naming `by` and `why`). Returns that line."""
    from projects.services import activity_record, project_personal

    with transaction.atomic():
        tokens = ApiToken.objects.filter(user_id=user.pk, revoked_at=None).update(
            revoked_at=timezone.now())
        rows = list(UserSession.objects.filter(user_id=user.pk)
                    .exclude(session_key=keep_session_key or None))
        for row in rows:
            _store().delete(row.session_key)
        UserSession.objects.filter(pk__in=[row.pk for row in rows]).delete()
        summary = (f"{why}: {by.get_username() if by is not None else 'the system'} revoked "
                   f"{tokens} API token{'s' * (tokens != 1)} of {user.get_username()} and ended "
                   f"{len(rows)} session{'s' * (len(rows) != 1)}")
        if tokens or rows:  # a first password (a new account) revokes nothing: no log line
            activity_record(project=project_personal(user=user), actor=by,
                            verb="tokens_revoked", summary=summary, tokens=tokens,
                            sessions=len(rows))
    logger.info("%s", summary)
    return summary


def member_credentials_revoke(*, user: Any, project: Any, member: Any) -> str:
    """An owner of `project` (projects.policy: MANAGE_MEMBERS) revokes a member's API tokens and
    ends their sessions, e.g. a laptop lost; logged in the project and in the member's log.
    A user who is not a member of the project is a 404."""
    from projects import policy
    from projects.models import Membership
    from projects.services import activity_record

    policy.require(user=user, action=policy.Action.MANAGE_MEMBERS, project=project)
    if not Membership.objects.filter(project=project, user_id=getattr(member, "pk", None)).exists():
        raise Http404("No such member.")
    summary = credentials_revoke(user=member, by=user,
                                 why=f"Asked by an owner of “{project.name}”")
    activity_record(project=project, actor=user, verb="member_tokens_revoked", summary=summary,
                    member=member.get_username())
    return summary


# --- Reads ----------------------------------------------------------------------------------------


def session_list(*, user: Any) -> list[UserSession]:
    """The user's sessions that still exist in the session store, newest first."""
    store = _store()
    return [row for row in UserSession.objects.filter(user_id=user.pk)
            if store.exists(row.session_key)]


# --- Signals --------------------------------------------------------------------------------------


@receiver(user_logged_in, dispatch_uid="medlitbot_session_track")
def _logged_in(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    if request is not None and hasattr(request, "session"):
        session_track(request=request, user=user)


@receiver(user_logged_out, dispatch_uid="medlitbot_session_untrack")
def _logged_out(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    key = getattr(getattr(request, "session", None), "session_key", None)
    if key:
        UserSession.objects.filter(session_key=key).delete()


@receiver(post_save, sender=get_user_model(), dispatch_uid="medlitbot_password_changed")
def _password_set(sender: Any, instance: Any, created: bool, **kwargs: Any) -> None:
    # set_password() leaves the raw password on `_password` until save() has run (Django clears
    # it after this signal); a hash upgraded at login clears it before saving, so only a
    # password someone set gets here, whichever page, form or command set it.
    if created or getattr(instance, "_password", None) is None:
        return
    credentials_revoke(user=instance, by=instance, why="Password changed")
