"""The saved searches' digests on a collection's page (templates/datasets/detail.html):
one tag, so the dataset app's view knows nothing of saved searches."""

from __future__ import annotations

from typing import Any

from django import template

from literature import selectors
from projects import policy

register = template.Library()


@register.inclusion_tag("literature/collection_digests.html", takes_context=True)
def collection_digests(context: dict[str, Any], dataset: Any) -> dict[str, Any]:
    """The latest runs that made this version or whose search feeds it, if the viewer may see
    the dataset's project (the page has already checked; this asks again, cheaply)."""
    request = context.get("request")
    user = getattr(request, "user", None)
    if dataset is None or not policy.can(user=user, action=policy.Action.VIEW, obj=dataset):
        return {"runs": []}
    return {"runs": selectors.dataset_search_runs(dataset=dataset)}
