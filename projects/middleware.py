"""request.project: the project a signed-in person is working in, kept in their session."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.utils.functional import SimpleLazyObject

from . import policy, selectors, services

SESSION_KEY = "project_id"


def my_projects(request: HttpRequest) -> list[Any]:
    """The user's projects with their role in each: one query per request, shared by the
    current project, the header's switcher and the buttons' role."""
    if not hasattr(request, "_my_projects"):
        request._my_projects = list(selectors.project_list_rows(user=request.user))
        for row in request._my_projects:
            policy.role_remember(user=request.user, project_id=row.pk, role=row.my_role)
    return request._my_projects


def project_current(request: HttpRequest) -> Any:
    """The session's project while the person is still a member, else their personal one."""
    user = request.user
    if not user.is_authenticated:
        return None
    rows = my_projects(request)
    wanted = request.session.get(SESSION_KEY)
    for row in rows:
        if row.pk == wanted:
            return row
    for row in rows:
        if row.personal_for_id == user.pk:
            return row
    return services.project_personal(user=user)  # a user never has no project


def project_last_restore(*, request: HttpRequest | None, user: Any, **_: Any) -> None:
    """On login (user_logged_in): back to the project last worked in, if still a member;
    otherwise the session holds none and project_current gives the personal project."""
    if request is None or not hasattr(request, "session"):
        return
    last = selectors.project_last_used_id(user=user)
    if last is not None:
        request.session[SESSION_KEY] = last


class CurrentProjectMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        # Lazy: the API, probes and static files never pay for it.
        request.project = SimpleLazyObject(lambda: project_current(request))
        return self.get_response(request)
