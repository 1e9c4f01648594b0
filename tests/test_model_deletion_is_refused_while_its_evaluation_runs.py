"""A model is not deleted while one of its evaluations is queued or running (the worker would
read the artifact and write into the evaluation's folder that the deletion removes), nor while
a fine-tuning reads the adapted encoder it is; the page and the API both say why. Once the
evaluation has ended, the model deletes."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from classification import services
from classification.models import EvaluationJob, MLModel, TrainingJob

pytestmark = pytest.mark.django_db
S = EvaluationJob.Status
WAIT = "Wait for its evaluations to finish (or cancel them) before deleting it."


def evaluation(model: MLModel, status: str) -> EvaluationJob:
    return EvaluationJob.objects.create(ml_model=model, owner=model.owner, filename="f.csv",
                                        status=status)


@pytest.mark.parametrize("status", [S.QUEUED, S.RUNNING])
def test_a_model_being_evaluated_is_not_deleted(user: Any, rows: Any, status: str) -> None:
    model = rows.model(user, rows.dataset(user))
    evaluation(model, status)

    with pytest.raises(ValueError, match="evaluations to finish"):
        services.mlmodel_delete(ml_model=model, actor=user)

    assert MLModel.objects.filter(pk=model.pk).exists()
    assert EvaluationJob.objects.filter(ml_model=model, status=status).exists()


def test_a_model_whose_evaluations_ended_is_deleted(user: Any, rows: Any) -> None:
    model = rows.model(user, rows.dataset(user))
    for status in (S.COMPLETED, S.FAILED, S.CANCELLED):
        evaluation(model, status)

    services.mlmodel_delete(ml_model=model, actor=user)

    assert not MLModel.objects.filter(pk=model.pk).exists()
    assert not EvaluationJob.objects.exists()


def test_the_page_shows_why_the_model_was_not_deleted(
    alice_client: Any, user: Any, rows: Any,
) -> None:
    model = rows.model(user, rows.dataset(user))
    evaluation(model, S.RUNNING)

    response = alice_client.post(reverse("classification:model_delete", args=[model.pk]),
                                 follow=True)

    assert response.redirect_chain[-1][0] == reverse("classification:model_detail",
                                                     args=[model.pk])
    assert WAIT in response.content.decode()
    assert MLModel.objects.filter(pk=model.pk).exists()


def test_the_api_answers_409_with_why(client: Any, api_token: str, user: Any,
                                      rows: Any) -> None:
    model = rows.model(user, rows.dataset(user))
    evaluation(model, S.QUEUED)

    response = client.delete(f"/api/models/{model.pk}/", HTTP_AUTHORIZATION=f"Token {api_token}")

    assert response.status_code == 409
    assert response.json()["detail"] == WAIT
    assert MLModel.objects.filter(pk=model.pk).exists()


def test_an_adapted_encoder_being_fine_tuned_is_not_deleted(user: Any, rows: Any) -> None:
    dataset = rows.dataset(user)
    encoder = rows.model(user, dataset, name="Cardio encoder", model_type="adapt")
    tuned = rows.model(user, dataset, name="Cardio classifier", model_type="adapted",
                       status=MLModel.Status.TRAINING)
    job = rows.job(tuned, status=TrainingJob.Status.QUEUED,
                   config={"encoder_model_id": encoder.pk})
    other_encoder = rows.model(user, dataset, name="Other encoder", model_type="adapt")

    with pytest.raises(ValueError, match="“Cardio classifier” is being fine-tuned"):
        services.mlmodel_delete(ml_model=encoder, actor=user)
    services.mlmodel_delete(ml_model=other_encoder, actor=user)  # no job reads that one

    assert MLModel.objects.filter(pk=encoder.pk).exists()
    assert not MLModel.objects.filter(pk=other_encoder.pk).exists()
    TrainingJob.objects.filter(pk=job.pk).update(status=TrainingJob.Status.COMPLETED)
    services.mlmodel_delete(ml_model=encoder, actor=user)
    assert not MLModel.objects.filter(pk=encoder.pk).exists()
