"""Template context: the header's project switcher and which buttons the role may use."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from . import policy
from .middleware import my_projects

PAGE_PROJECT_ATTR = "page_project_id"


def page_project_show(*, request: HttpRequest, project_id: int) -> None:
    """A page about one object says which project it belongs to.

    Such a page may be opened from a link while the person works in another project; the
    header then names the object's project (and the buttons follow their role there), not the
    session's current one, which the page does not change.
    """
    setattr(request, PAGE_PROJECT_ATTR, project_id)


def _shown_project(request: HttpRequest) -> Any:
    wanted = getattr(request, PAGE_PROJECT_ATTR, None)
    if wanted is not None:
        for row in my_projects(request):
            if row.pk == wanted:
                return row
    return request.project


def current_project(request: HttpRequest) -> dict[str, Any]:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated or not hasattr(request, "project"):
        return {}
    shown = SimpleLazyObject(lambda: _shown_project(request))

    def role() -> str | None:
        # my_projects remembered every role it read, so this asks the database nothing.
        return policy.role_of(user=user, project=shown)

    return {
        "current_project": shown,
        "my_projects": SimpleLazyObject(lambda: my_projects(request)),
        # {% if may.train %}: the button is drawn only for a role that may use it.
        "may": SimpleLazyObject(lambda: policy.actions_for(role())),
        "current_role": SimpleLazyObject(role),
    }
