"""Another user's object is a 404, never a 403: the API does not confirm that it exists."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from rest_framework.exceptions import NotFound
from rest_framework.request import Request

from classification.batches import selectors as batch_selectors
from classification.models import BatchJob, MLModel, TrainingJob


def owned_model(request: Request, pk: int) -> MLModel:
    return get_object_or_404(MLModel, pk=pk, owner=request.user)


def owned_job(request: Request, pk: int) -> TrainingJob:
    """The whole row: cancel and resume change it."""
    return get_object_or_404(TrainingJob, pk=pk, ml_model__owner=request.user)


def owned_batch(request: Request, batch_id: str) -> BatchJob:
    batch = batch_selectors.batch_job_get(owner=request.user, batch_id=batch_id)
    if batch is None:
        raise NotFound("No such batch.")
    return batch
