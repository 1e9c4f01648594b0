"""The texts an adapt job hands to the engine: the picked datasets' train and validation rows
(train rows only, with `training texts only`, the default) and the picked batches' articles,
each once, and never a test row, nor a batch article that is a test row (or, training texts
only, a validation row) written with other case and punctuation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from classification.batches import storage
from classification.engine.types import article_text
from classification.jobs import adapt
from classification.jobs.progress import Heartbeat, ProgressWriter
from classification.models import BatchJob
from dataset_management.normalize import text_key
from dataset_management.selectors import dataset_split_examples

NEW_TITLE = "Zebrafish fins regrow after cryoinjury"
NEW_ABSTRACT = "We describe regeneration in a vertebrate model never seen in this dataset."


def _batch_with(owner: Any, model: Any, articles: list[tuple[str, str]]) -> BatchJob:
    """A completed batch whose stored records are `articles` (title, abstract)."""
    batch = BatchJob.objects.create(owner=owner, ml_model=model, filename="articles.csv",
                                    status=BatchJob.Status.COMPLETED, total=len(articles),
                                    processed=len(articles))
    folder = storage.batch_folder(owner_id=owner.pk, batch_id=batch.pk)
    folder.mkdir(parents=True)
    (folder / storage.RESULT_NAME).write_text("row,title\n", encoding="utf-8")
    with (folder / storage.RECORDS_NAME).open("w", encoding="utf-8") as out:
        for row, (title, abstract) in enumerate(articles):
            out.write(json.dumps({"row": row, "title": title, "abstract": abstract,
                                  "identifiers": {}, "predicted_labels": [],
                                  "probabilities": {}, "note": ""}) + "\n")
    batch.result_path = storage.relative(folder / storage.RESULT_NAME)
    batch.save(update_fields=["result_path"])
    return batch


@pytest.mark.django_db
def test_an_adapt_job_hands_the_engine_every_train_and_validation_text_and_no_test_text(
    slice_dataset: Any, earlier_model: Any, user: Any
) -> None:
    test_texts = dataset_split_examples(dataset=slice_dataset, split="test").texts
    assert test_texts
    title, _, abstract = test_texts[0].partition("\n\n")
    # The same article as a test row, shouted and re-punctuated: text_key says it is the same.
    disguised = (title.upper() + "!!", abstract.replace(".", " ;"))
    assert text_key(article_text(*disguised)) == text_key(test_texts[0])
    batch = _batch_with(user, earlier_model, [disguised, (NEW_TITLE, NEW_ABSTRACT),
                                              (NEW_TITLE, NEW_ABSTRACT)])

    job = adapt.adapt_job_create(owner=user, datasets=[slice_dataset], batches=[batch],
                                 config={"epochs": 1, "adapt_training_only": False})
    assert job.ml_model.model_type == "adapt"
    assert job.config["adapt_datasets"] == [str(slice_dataset.pk)]
    run = adapt.AdaptRun(job=job, writer=ProgressWriter(job, interval=60.0),
                         heartbeat=Heartbeat(job.pk, interval=60.0))
    adapt._step_texts(run)  # what _step_adapt then hands to EncoderAdapter.fit_texts as is
    handed = run.corpus.texts

    test_keys = {text_key(t) for t in test_texts}
    assert not [t for t in handed if text_key(t) in test_keys]
    expected: dict[str, str] = {}
    for split in ("train", "validation"):
        for text in dataset_split_examples(dataset=slice_dataset, split=split).texts:
            expected.setdefault(text_key(text), text)
    expected.setdefault(text_key(article_text(NEW_TITLE, NEW_ABSTRACT)),
                        article_text(NEW_TITLE, NEW_ABSTRACT))
    assert sorted(handed) == sorted(expected.values())
    assert run.corpus.counts["equal_to_a_test_row"] == 1
    assert run.corpus.counts["batch_texts"] == 1
    assert run.corpus.counts["duplicates"] >= 1
    assert Path(settings.MODEL_ARTIFACT_ROOT).is_dir()


@pytest.mark.django_db
def test_training_texts_only_hands_the_engine_the_train_split_and_no_validation_text(
    slice_dataset: Any, earlier_model: Any, user: Any
) -> None:
    validation = dataset_split_examples(dataset=slice_dataset, split="validation").texts
    assert validation
    title, _, abstract = validation[0].partition("\n\n")
    # A batch article that is a validation row written otherwise is left out as well.
    batch = _batch_with(user, earlier_model, [(title.lower(), abstract + " "),
                                              (NEW_TITLE, NEW_ABSTRACT)])
    job = adapt.adapt_job_create(owner=user, datasets=[slice_dataset], batches=[batch],
                                 config={"epochs": 1})
    assert job.config["adapt_training_only"] is True  # the default
    run = adapt.AdaptRun(job=job, writer=ProgressWriter(job, interval=60.0),
                         heartbeat=Heartbeat(job.pk, interval=60.0))
    adapt._step_texts(run)

    held = {text_key(t) for split in ("validation", "test")
            for t in dataset_split_examples(dataset=slice_dataset, split=split).texts}
    expected: dict[str, str] = {}
    for text in dataset_split_examples(dataset=slice_dataset, split="train").texts:
        if text_key(text) not in held:
            expected.setdefault(text_key(text), text)
    expected.setdefault(text_key(article_text(NEW_TITLE, NEW_ABSTRACT)),
                        article_text(NEW_TITLE, NEW_ABSTRACT))
    assert sorted(run.corpus.texts) == sorted(expected.values())
    assert run.corpus.counts["equal_to_a_validation_row"] >= 1
    assert run.corpus.counts["batch_texts"] == 1


@pytest.mark.django_db
def test_an_adapt_job_refuses_an_unfinished_batch_and_saves_nothing(
    slice_dataset: Any, earlier_model: Any, user: Any
) -> None:
    from classification.engine.schema import TrainConfigError
    from classification.models import MLModel, TrainingJob

    batch = BatchJob.objects.create(owner=user, ml_model=earlier_model, filename="a.csv")
    before = (MLModel.objects.count(), TrainingJob.objects.count())
    with pytest.raises(TrainConfigError, match="has not completed"):
        adapt.adapt_job_create(owner=user, datasets=[slice_dataset], batches=[batch])
    with pytest.raises(TrainConfigError, match="transformer encoder"):
        adapt.adapt_job_create(owner=user, datasets=[slice_dataset], batches=[],
                               config={"adapt_base": "tfidf_svm"})
    assert (MLModel.objects.count(), TrainingJob.objects.count()) == before
