"""The rows an API request may reach: every one through projects.policy, never by owner.

A row outside the caller's projects is a 404 that says nothing about it; a row they can see
whose action needs a higher role is a 403 naming that role (api/exceptions.py answers both).
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework.request import Request

from classification.batches import selectors as batch_selectors
from classification.models import BatchJob, MLModel, TrainingJob
from dataset_management import selectors as dataset_selectors
from dataset_management.models import Dataset
from projects import policy
from projects.models import Project

Action = policy.Action

PROJECT_PARAMETER = OpenApiParameter(
    "project", OpenApiTypes.INT,
    description="Only this project's rows (one you are a member of; any other is a 404). "
    "Without it, the rows of all your projects.",
)


def project_narrowed(request: Request) -> Project | None:
    """The project ?project=<id> narrows a list to; None without one. 404 "No such project."
    for a project the caller is not in, so the answer says nothing about it."""
    value = request.query_params.get("project")
    if value is None or value == "":
        return None
    return policy.project_get(user=request.user, project_id=value)


def scoped(request: Request, queryset: QuerySet) -> QuerySet:
    """A list's rows: all the caller's projects, or the one ?project= names."""
    return policy.scope(queryset, user=request.user, project=project_narrowed(request))


def row_get(request: Request, queryset: QuerySet | type, *, action: str, **lookup: Any) -> Any:
    return policy.object_get(queryset, user=request.user, action=action, **lookup)


def dataset_get(request: Request, pk: int, *, action: str = Action.VIEW) -> Dataset:
    return dataset_selectors.dataset_get(user=request.user, pk=pk, action=action)


def model_get(request: Request, pk: int, *, action: str = Action.VIEW) -> MLModel:
    return row_get(request, MLModel, action=action, pk=pk)


def job_get(request: Request, pk: int, *, action: str = Action.VIEW) -> TrainingJob:
    """The whole row: cancel and resume change it."""
    return row_get(request, TrainingJob, action=action, pk=pk)


def batch_get(request: Request, batch_id: str, *, action: str = Action.VIEW) -> BatchJob:
    """With only the model's name beside it (a model row holds its metrics)."""
    return batch_selectors.batch_job_get(user=request.user, batch_id=batch_id, action=action)
