"""A custom model trains only from a usable folder, and training_job_create is what says so: the
form, the API, train_model, the seed's task and any other caller of the service get the same
refusal, on the model_path setting, and no job starts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.test import APIClient

from classification import services
from classification.ml_models import TrainConfigError
from classification.models import MLModel, TrainingJob

NO_FOLDER = "The custom type needs a local model folder."


@pytest.fixture
def staff(user: Any) -> Any:
    user.is_staff = True  # only staff may name a folder on the server at all
    user.save(update_fields=["is_staff"])
    return user


def not_a_model(tmp_path: Path) -> str:
    folder = tmp_path / "not-a-model"
    folder.mkdir()
    return str(folder)


def refusals(tmp_path: Path) -> list[tuple[dict[str, str], str]]:
    """(settings, the words of the refusal): no folder at all, and a folder that is no model."""
    folder = not_a_model(tmp_path)
    return [({}, NO_FOLDER), ({"model_path": folder}, "has no config.json")]


def assert_nothing_started() -> None:
    assert not TrainingJob.objects.exclude(status=TrainingJob.Status.FAILED).exists()


def test_the_form_shows_the_refusal_on_the_folder_field(staff, rows, alice_client,
                                                        tmp_path) -> None:
    dataset = rows.dataset(staff)
    for config, words in refusals(tmp_path):
        response = alice_client.post(reverse("classification:model_new"), {
            "dataset": dataset.pk, "model_type": "custom", "preset": "quick", **config})
        assert response.status_code == 200
        errors = response.context["form"].errors
        assert any(words in error for error in errors["model_path"]), errors
    assert not MLModel.objects.exists()


def test_the_api_answers_400_on_the_folder_setting(staff, rows, api_token, tmp_path) -> None:
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {api_token}")
    dataset = rows.dataset(staff)
    for config, words in refusals(tmp_path):
        response = api.post("/api/jobs/", {"dataset": dataset.pk, "model_type": "custom",
                                           "config": config}, format="json")
        assert response.status_code == 400
        assert words in json.dumps(response.json()["config"]["model_path"])
    assert not MLModel.objects.exists()


def test_train_model_names_the_folder_option(staff, rows, tmp_path) -> None:
    dataset = rows.dataset(staff)
    for config, words in refusals(tmp_path):
        options = [f"--model-path={config['model_path']}"] if config else []
        with pytest.raises(CommandError) as refused:
            call_command("train_model", "--dataset", str(dataset.pk), "--type", "custom",
                         *options)
        assert "--model-path: " in str(refused.value)
        assert words in str(refused.value)
    assert not MLModel.objects.exists()


def test_the_service_refuses_every_other_caller(staff, rows, tmp_path) -> None:
    # Review retrain, ensembles and scripts call the service itself.
    dataset = rows.dataset(staff)
    for config, words in refusals(tmp_path):
        with pytest.raises(TrainConfigError) as refused:
            services.training_job_create(owner=staff, dataset=dataset, model_type="custom",
                                         name="Mine", config=config)
        assert list(refused.value.errors) == ["model_path"]
        assert words in refused.value.errors["model_path"][0]
    assert not MLModel.objects.exists()


def test_the_seeds_task_ends_the_job_failed_with_the_same_words(staff, rows, tmp_path) -> None:
    from classification.tasks import start_model_training

    dataset = rows.dataset(staff)
    for config, words in refusals(tmp_path):
        model = MLModel.objects.create(owner=staff, name="Seeded", model_type="custom",
                                       dataset=dataset, project_id=dataset.project_id)
        start_model_training.apply(args=(model.pk, {"epochs": 1, **config}))
        job = TrainingJob.objects.get(ml_model=model)
        assert job.status == TrainingJob.Status.FAILED
        assert words in job.reason
        model.refresh_from_db()
        assert model.status == MLModel.Status.FAILED
    assert_nothing_started()
