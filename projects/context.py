"""Template context: the header's project switcher and which buttons the role may use."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from . import policy
from .middleware import my_projects


def current_project(request: HttpRequest) -> dict[str, Any]:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated or not hasattr(request, "project"):
        return {}

    def role() -> str | None:
        # my_projects remembered every role it read, so this asks the database nothing.
        return policy.role_of(user=user, project=request.project)

    return {
        "current_project": request.project,
        "my_projects": SimpleLazyObject(lambda: my_projects(request)),
        # {% if may.train %}: the button is drawn only for a role that may use it.
        "may": SimpleLazyObject(lambda: policy.actions_for(role())),
        "current_role": SimpleLazyObject(role),
    }
