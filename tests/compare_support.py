"""Helpers of the Compare tests: TF-IDF models trained on one dataset by the training job's own
code, and the Compare page and API asked about them."""

from __future__ import annotations

from typing import Any

from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from classification.jobs import lifecycle
from classification.jobs.training import run_training
from classification.models import MLModel, TrainingJob


def trained_on(dataset: Any, *, user: Any, model_type: str) -> MLModel:
    """A `model_type` model trained on `dataset` as a worker trains it, in this process."""
    model = MLModel.objects.create(owner=user, name=model_type, model_type=model_type,
                                   dataset=dataset)
    job = TrainingJob.objects.create(ml_model=model, config={}, total_epochs=1)
    assert lifecycle.training_job_claim(job=job)
    assert run_training(job_id=job.pk) == 0
    job.refresh_from_db()
    assert job.status == "completed", job.reason
    model.refresh_from_db()
    return model


def compare_page(user: Any, models: list[MLModel], **query: str) -> str:
    client = Client()
    client.force_login(user)
    response = client.get(reverse("classification:model_compare"),
                          {"ids": [m.pk for m in models], **query})
    assert response.status_code == 200
    return response.content.decode()


def compare_api(user: Any, ids: str, on: str | None = None) -> Any:
    client = APIClient()
    client.force_authenticate(user)
    return client.get("/api/models/compare/", {"ids": ids, **({"on": on} if on else {})})
