"""Find the best model: the page offers the kinds on this machine and names those that are not;
the page, the API and train_model queue the same search job; a kind that is not here, one that
cannot be searched, or a budget out of range is refused with the reason and creates nothing."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.test import APIClient

from classification.jobs import lifecycle
from classification.models import MLModel, TrainingJob

pytestmark = pytest.mark.django_db
BUNDLED = ["tfidf_logreg", "tfidf_svm", "minilm_embed_logreg", "minilm"]


@pytest.fixture(autouse=True)
def no_broker(monkeypatch) -> list[dict]:
    sent: list[dict] = []
    monkeypatch.setattr(lifecycle, "_enqueue", lambda **kw: sent.append(kw))
    return sent


@pytest.fixture
def api(api_token) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token}")
    return client


def test_the_page_offers_the_kinds_on_this_machine_and_names_the_others(
        alice_client, user, rows, monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    rows.dataset(user, name="Trainable")
    page = alice_client.get(reverse("classification:search_new")).content.decode()
    assert "Trainable" in page
    for key in BUNDLED:
        assert f'value="{key}"' in page
    assert 'value="biobert"' not in page
    assert 'id="search-unavailable"' in page
    assert "BioBERT" in page
    assert 'value="custom"' not in page
    models = alice_client.get(reverse("classification:model_list")).content.decode()
    assert reverse("classification:search_new") in models


def test_the_page_queues_one_search_job_and_opens_its_page(alice_client, user, rows,
                                                           no_broker) -> None:
    dataset = rows.dataset(user)
    response = alice_client.post(reverse("classification:search_new"), {
        "dataset": dataset.pk, "time_budget_minutes": "3",
        "candidates": ["tfidf_logreg", "minilm"], "ensemble": "on", "name": "",
    })
    job = TrainingJob.objects.get(ml_model__owner=user)
    assert response.status_code == 302
    assert response["Location"] == reverse("classification:job_detail", args=[job.pk])
    assert job.ml_model.model_type == "search"
    assert job.config["time_budget_minutes"] == 3.0
    assert job.config["search_candidates"] == ["tfidf_logreg", "minilm"]
    assert job.config["search_ensemble"] is True
    assert job.ml_model.name.startswith("Search on ")

    page = alice_client.get(response["Location"]).content.decode()
    assert 'id="leaderboard"' in page
    assert "No trial has finished yet." in page
    assert "Cancel this search?" in page
    assert "time_budget_minutes" in page  # the job's settings, as for any job


def test_a_budget_out_of_range_or_no_candidate_is_refused_on_the_page(alice_client, user,
                                                                      rows) -> None:
    dataset = rows.dataset(user)
    for budget, candidates in (("0", ["tfidf_logreg"]), ("5000", ["tfidf_logreg"]),
                               ("5", []), ("5", ["biobert"])):
        response = alice_client.post(reverse("classification:search_new"), {
            "dataset": dataset.pk, "time_budget_minutes": budget, "candidates": candidates})
        assert response.status_code == 200
        assert 'class="errorlist' in response.content.decode()
    assert not MLModel.objects.exists()


def test_the_api_starts_a_search_and_reports_its_trials_field(api, user, rows) -> None:
    dataset = rows.dataset(user)
    response = api.post("/api/jobs/", {
        "dataset": dataset.pk, "model_type": "search",
        "config": {"time_budget_minutes": 2, "search_candidates": ["tfidf_svm"]},
    }, format="json")
    assert response.status_code == 201, response.content
    job = api.get(f"/api/jobs/{response.json()['id']}/").json()
    assert job["leaderboard"] == []
    assert job["config"]["search_candidates"] == ["tfidf_svm"]

    # Every available kind when none are named.
    response = api.post("/api/jobs/", {"dataset": dataset.pk, "model_type": "search",
                                       "config": {"time_budget_minutes": 1}}, format="json")
    assert response.status_code == 201, response.content
    assert set(response.json()["config"]["search_candidates"]) >= set(BUNDLED)


def test_the_api_refuses_unknown_unsearchable_or_absent_kinds_and_bad_budgets(
        api, user, rows, monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    dataset = rows.dataset(user)
    for config, words in (
        ({"search_candidates": ["biobert"]}, "not on this machine"),
        ({"search_candidates": ["custom"]}, "cannot be a search candidate"),
        ({"search_candidates": ["ensemble"]}, "cannot be a search candidate"),
        ({"search_candidates": ["nope"]}, "cannot be a search candidate"),
        ({"time_budget_minutes": 0}, "between"),
        ({"search_storage": "sqlite:////tmp/x"}, "Set by the deployment"),
    ):
        response = api.post("/api/jobs/", {"dataset": dataset.pk, "model_type": "search",
                                           "config": config}, format="json")
        assert response.status_code == 400, config
        assert words in response.content.decode(), (config, response.content)
    assert not MLModel.objects.exists()


def test_train_model_starts_a_search_from_the_shell(user, rows) -> None:
    dataset = rows.dataset(user)
    call_command("train_model", "--dataset", str(dataset.pk), "--type", "search",
                 "--time-budget-minutes", "2", "--search-candidates", "tfidf_logreg,tfidf_svm")
    job = TrainingJob.objects.get()
    assert job.config["search_candidates"] == ["tfidf_logreg", "tfidf_svm"]
    with pytest.raises(CommandError, match="cannot be a search candidate"):
        call_command("train_model", "--dataset", str(dataset.pk), "--type", "search",
                     "--search-candidates", "custom")
