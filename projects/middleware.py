"""request.project: the project a signed-in person is working in, kept in their session."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.utils.functional import SimpleLazyObject

from . import selectors

SESSION_KEY = "project_id"


def project_current(request: HttpRequest) -> Any:
    """The session's project while the person is still a member, else their personal one."""
    user = request.user
    if not user.is_authenticated:
        return None
    return selectors.project_current(user=user, project_id=request.session.get(SESSION_KEY))


class CurrentProjectMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        # Lazy: the API, probes and static files never pay for it.
        request.project = SimpleLazyObject(lambda: project_current(request))
        return self.get_response(request)
