"""Self-training settings that cannot work are refused when the job is created, naming the
setting, and leave no model or job behind: rounds or confidence out of range, ids that are not
ids, rounds without sources or sources without rounds, a dataset of another project or none at
all, a batch that has not finished, and a search (which fits many models, not one)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from classification.engine.schema import TrainConfigError
from classification.jobs import lifecycle
from classification.models import BatchJob, MLModel, TrainingJob
from tests.self_training_support import NEW_ARTICLES, batch_with, unlabelled_dataset


@pytest.mark.django_db
def test_each_bad_self_training_setting_is_named_and_nothing_is_saved(
        slice_dataset: Any, earlier_model: Any, user: Any, other_user: Any,
        import_file: Callable[..., Any], tmp_path: Path) -> None:
    unlabelled = unlabelled_dataset(import_file, slice_dataset, tmp_path)
    elsewhere = import_file(tmp_path / "unlabelled.csv", name="Theirs", owner=other_user)
    assert elsewhere.project_id != slice_dataset.project_id
    running = batch_with(user, earlier_model, NEW_ARTICLES, status=BatchJob.Status.RUNNING)
    ok = {"self_training_rounds": 1, "self_training_datasets": [str(unlabelled.pk)]}
    cases = [
        ({**ok, "self_training_rounds": 4}, "self_training_rounds", "between 0 and 3"),
        ({**ok, "self_training_threshold": 0.3}, "self_training_threshold", "between 0.5"),
        ({**ok, "self_training_datasets": ["first"]}, "self_training_datasets", "whole numbers"),
        ({**ok, "self_training_batches": ["b-1"]}, "self_training_batches", "batch ids"),
        ({"self_training_rounds": 2}, "self_training_datasets", "at least one dataset or batch"),
        ({"self_training_datasets": [str(unlabelled.pk)]}, "self_training_rounds",
         "Set self-training rounds"),
        ({**ok, "self_training_datasets": [str(elsewhere.pk)]}, "self_training_datasets",
         f"No dataset {elsewhere.pk} in this dataset's project"),
        ({**ok, "self_training_datasets": ["987654"]}, "self_training_datasets",
         "No dataset 987654 in this dataset's project"),
        ({**ok, "self_training_batches": [running.pk.hex]}, "self_training_batches",
         "has not completed"),
    ]
    cases = [(config, key, words, "tfidf_logreg") for config, key, words in cases]
    cases.append((ok, "self_training_rounds", "not a search", "search"))
    before = (MLModel.objects.count(), TrainingJob.objects.count())
    for config, key, words, model_type in cases:
        with pytest.raises(TrainConfigError) as caught:
            lifecycle.training_job_create(owner=user, dataset=slice_dataset,
                                          model_type=model_type, name="", config=config)
        assert key in caught.value.errors, (config, caught.value.errors)
        assert words in " ".join(caught.value.errors[key]), (config, caught.value.errors)
        assert (MLModel.objects.count(), TrainingJob.objects.count()) == before

    job = lifecycle.training_job_create(owner=user, dataset=slice_dataset,
                                        model_type="tfidf_logreg", name="", config=ok)
    assert job.config["self_training_datasets"] == [str(unlabelled.pk)]
