"""A job of a kind with its own learning rate (MiniLM: 1e-4, measured by
scripts/compare_recipes.py) records and uses it whatever the preset, unless the person sets one;
BERT-base kinds keep the schema's 5e-5; the job's config shows the rate it trained with."""

from __future__ import annotations

import pytest
from django.urls import reverse

from classification.engine.registry import REGISTRY
from classification.jobs.lifecycle import training_job_create
from classification.ml_models import TrainConfig
from classification.models import TrainingJob

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("preset", ["quick", "balanced", "best"])
def test_every_preset_of_minilm_takes_the_kind_s_rate(alice_client, user, rows, preset) -> None:
    response = alice_client.post(reverse("classification:model_new"), {
        "dataset": rows.dataset(user).pk, "model_type": "minilm", "preset": preset})
    assert response.status_code == 302
    config = TrainingJob.objects.get().config
    assert config["learning_rate"] == REGISTRY["minilm"].learning_rate == 1e-4
    assert TrainConfig.from_dict(config).learning_rate == 1e-4


def test_a_rate_the_person_gives_wins_under_either_name(user, rows) -> None:
    dataset = rows.dataset(user)
    given = training_job_create(owner=user, dataset=dataset, model_type="minilm", name="a",
                                config={"learning_rate": 3e-5})
    alias = training_job_create(owner=user, dataset=dataset, model_type="minilm", name="b",
                                config={"lr": 2e-5})
    assert TrainConfig.from_dict(given.config).learning_rate == 3e-5
    assert TrainConfig.from_dict(alias.config).learning_rate == 2e-5


def test_bert_base_kinds_and_baselines_keep_the_schema_default(user, rows) -> None:
    dataset = rows.dataset(user)
    for model_type in ("biobert", "tfidf_logreg"):
        job = training_job_create(owner=user, dataset=dataset, model_type=model_type,
                                  name=model_type, config={})
        assert "learning_rate" not in job.config
        assert TrainConfig.from_dict(job.config).learning_rate == 5e-5
