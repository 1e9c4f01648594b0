"""One schema bounds training settings at every door: the form, the API and train_model.

The same bad value gets the same field message from all three, and nothing is created.
"""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.test import APIClient

from classification.models import MLModel, TrainingJob

BAD_VALUES = [
    ("epochs", "1000", "Must be between 1 and 50."),
    ("epochs", "-5", "Must be between 1 and 50."),
    ("learning_rate", "nan", "Enter a finite number."),
    ("batch_size", "100000000", "Must be between 1 and 256."),
    ("max_length", "100000000", "Must be between 16 and 512."),
    ("epochs", "2.5", "Enter a whole number."),
]


def _form(client, dataset, name: str, value: str) -> str:
    response = client.post(reverse("classification:model_new"), {
        "dataset": dataset.pk, "model_type": "minilm", "preset": "quick", name: value,
    })
    assert response.status_code == 200
    return response.content.decode()


def _api(token: str, dataset, config: dict) -> tuple[int, str]:
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    response = api.post("/api/jobs/", {"dataset": dataset.pk, "model_type": "minilm",
                                       "config": config}, format="json")
    return response.status_code, json.dumps(response.json())


def _cli(dataset, *options: str) -> str:
    with pytest.raises(CommandError) as refused:
        call_command("train_model", "--dataset", str(dataset.pk), "--type", "minilm", *options)
    return str(refused.value)


@pytest.mark.parametrize("door", ["form", "api", "cli"])
@pytest.mark.parametrize(("name", "value", "message"), BAD_VALUES)
def test_an_out_of_range_setting_gets_the_same_message_at_every_door(
        door, name, value, message, alice_client, user, rows, api_token) -> None:
    dataset = rows.dataset(user)
    if door == "form":
        assert message in _form(alice_client, dataset, name, value)
    elif door == "api":
        # JSON numbers where they are numbers: a client sends 1000, not "1000".
        raw = value if value == "nan" else json.loads(value)
        status, body = _api(api_token, dataset, {name: raw})
        assert status == 400
        assert json.loads(body) == {"config": {name: [message]}}
    else:
        option = "--" + name.replace("_", "-")
        assert f"{option}: {message}" in _cli(dataset, option, value)
    assert not MLModel.objects.exists()
    assert not TrainingJob.objects.exists()


@pytest.mark.parametrize("key", ["allow_download", "model_dir", "download_timeout",
                                 "output_dir", "label_names"])
def test_what_the_server_may_do_is_not_a_job_setting(key, user, rows, api_token) -> None:
    dataset = rows.dataset(user)
    status, body = _api(api_token, dataset, {key: "/srv/models" if "dir" in key else True})
    assert status == 400
    assert key in json.loads(body)["config"]
    assert "not per job" in body
    assert not MLModel.objects.exists()


@pytest.mark.parametrize("options", [["--allow-download"], ["--model-dir", "/srv/models"],
                                     ["--download-timeout", "5"]])
def test_the_command_line_refuses_what_the_deployment_sets(options, user, rows) -> None:
    refused = _cli(rows.dataset(user), *options)
    assert f"{options[0]}: Set by the deployment, not per job." in refused
    assert not MLModel.objects.exists()


def test_an_unlabelled_dataset_is_not_offered_and_refused_at_every_door(
        alice_client, user, rows, api_token) -> None:
    from classification.forms import TrainingJobCreateForm

    labelled = rows.dataset(user, name="Labelled")
    unlabelled = rows.dataset(user, name="Unlabelled", label_names=[], label_counts={})
    assert list(TrainingJobCreateForm(user=user).fields["dataset"].queryset) == [labelled]

    page = alice_client.post(reverse("classification:model_new"), {
        "dataset": unlabelled.pk, "model_type": "tfidf_logreg", "preset": "quick"})
    assert page.status_code == 200
    assert "Select a valid choice" in page.content.decode()
    status, body = _api(api_token, unlabelled, {})
    assert status == 400
    assert "two labels" in json.loads(body)["dataset"][0]
    with pytest.raises(CommandError, match="two labels"):
        call_command("train_model", "--dataset", str(unlabelled.pk), "--type", "tfidf_logreg")
    assert not MLModel.objects.exists()


def test_an_unknown_setting_is_named_not_ignored(user, rows, api_token) -> None:
    status, body = _api(api_token, rows.dataset(user), {"epoch": 3})
    assert status == 400
    assert json.loads(body) == {"config": {"epoch": ["Unknown setting."]}}


def test_a_server_folder_is_only_for_staff(alice_client, user, rows, api_token,
                                           tmp_path) -> None:
    dataset = rows.dataset(user)
    (tmp_path / "config.json").write_text("{}")
    status, body = _api(api_token, dataset, {"model_path": str(tmp_path)})
    assert status == 400
    assert json.loads(body) == {
        "config": {"model_path": ["Only staff may train from a folder on the server."]}}
    page = alice_client.get(reverse("classification:model_new")).content.decode()
    assert 'name="model_path"' not in page
    assert not MLModel.objects.exists()


def test_the_deployment_decides_downloads_not_the_stored_job(settings, user, rows) -> None:
    from classification.jobs.progress import ProgressWriter
    from classification.jobs.training import build_config

    settings.ALLOW_MODEL_DOWNLOAD = False
    model = rows.model(user, rows.dataset(user), status=MLModel.Status.PENDING)
    # A job stored by an older version, when a job could still ask for downloads.
    job = TrainingJob.objects.create(ml_model=model, config={"allow_download": True,
                                                             "model_dir": "/elsewhere"})
    config = build_config(job, ProgressWriter(job, interval=60))
    assert config.allow_download is False
    assert config.model_dir == str(settings.MEDLITBOT_MODEL_DIR)


def test_good_settings_are_typed_and_start_a_job(alice_client, user, rows) -> None:
    dataset = rows.dataset(user)
    response = alice_client.post(reverse("classification:model_new"), {
        "dataset": dataset.pk, "model_type": "tfidf_logreg", "preset": "quick",
        "epochs": "2", "learning_rate": "0.001",
    })
    assert response.status_code == 302, response.content.decode()[:2000]
    job = TrainingJob.objects.get()
    assert job.config["epochs"] == 2
    assert job.config["learning_rate"] == 0.001
    assert job.config["preset"] == "quick"


def test_the_service_takes_a_server_folder_only_from_staff_or_code_that_says_so(
        user, rows, tmp_path) -> None:
    from classification import services
    from classification.ml_models import TrainConfigError

    dataset = rows.dataset(user)
    (tmp_path / "config.json").write_text("{}")  # a model folder, as training_job_create checks
    config = {"model_path": str(tmp_path)}
    with pytest.raises(TrainConfigError) as refused:
        services.training_job_create(owner=user, dataset=dataset, model_type="custom",
                                     name="Folder", config=config)
    assert refused.value.errors == {
        "model_path": ["Only staff may train from a folder on the server."]}
    assert not MLModel.objects.exists()
    job = services.training_job_create(owner=user, dataset=dataset, model_type="custom",
                                       name="Folder", config=config, staff=True)
    assert job.config["model_path"] == str(tmp_path)
