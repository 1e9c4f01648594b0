"""A model started without a name is named "<dataset> · <model type>" by training_job_create,
whichever door started it: the form, the API or train_model."""

from __future__ import annotations

from typing import Any

from django.core.management import call_command
from django.urls import reverse
from rest_framework.test import APIClient

from classification.models import MLModel

EXPECTED = "Demo articles · tfidf_logreg"


def test_the_form_the_api_and_the_cli_give_one_default_name(
        user: Any, rows: Any, alice_client: Any, api_token: str) -> None:
    dataset = rows.dataset(user)
    response = alice_client.post(reverse("classification:model_new"), {
        "dataset": dataset.pk, "model_type": "tfidf_logreg", "preset": "quick"})
    assert response.status_code == 302, response.content.decode()[:2000]

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {api_token}")
    response = api.post("/api/jobs/", {"dataset": dataset.pk, "model_type": "tfidf_logreg"},
                        format="json")
    assert response.status_code == 201, response.json()

    call_command("train_model", "--dataset", str(dataset.pk), "--type", "tfidf_logreg")

    assert list(MLModel.objects.values_list("name", flat=True)) == [EXPECTED] * 3


def test_a_name_given_is_kept(user: Any, rows: Any, api_token: str) -> None:
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {api_token}")
    response = api.post("/api/jobs/", {"dataset": rows.dataset(user).pk,
                                       "model_type": "tfidf_logreg", "name": "Mine"},
                        format="json")
    assert response.status_code == 201, response.json()
    assert MLModel.objects.get().name == "Mine"
