"""Template context: the header's project switcher and which buttons the role may use."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from . import policy, selectors


def current_project(request: HttpRequest) -> dict[str, Any]:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated or not hasattr(request, "project"):
        return {}
    projects = SimpleLazyObject(lambda: list(selectors.project_list_rows(user=user)))

    def role() -> str | None:
        # The switcher's rows already carry the user's role in each project: no extra query.
        current_id = request.project.pk
        for row in projects:
            if row.pk == current_id:
                policy.role_remember(user=user, project_id=current_id, role=row.my_role)
                return row.my_role
        return policy.role_of(user=user, project=request.project)

    return {
        "current_project": request.project,
        "my_projects": projects,
        # {% if may.train %}: the button is drawn only for a role that may use it.
        "may": SimpleLazyObject(lambda: policy.actions_for(role())),
        "current_role": SimpleLazyObject(role),
    }
