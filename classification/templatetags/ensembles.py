"""{% ensemble_member_rows model as rows %}: an ensemble's members, for includes that get only
the model (templates/classification/includes/ensemble_members.html)."""

from __future__ import annotations

from typing import Any

from django import template

from classification.jobs.ensembles import ensemble_member_rows as member_rows

register = template.Library()


@register.simple_tag
def ensemble_member_rows(model: Any) -> list[dict[str, Any]]:
    return member_rows(ml_model=model) if model is not None else []
