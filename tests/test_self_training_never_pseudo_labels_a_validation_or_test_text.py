"""Self-training labels unlabelled texts and learns from them; a text equal (under text_key) to
a validation or test row of the job's dataset must never be one of them, whether it comes from
an unlabelled dataset or a batch, written with other case and punctuation. The training rows
are not relabelled either."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from classification import paths
from classification.engine.types import article_text
from classification.jobs import adapt, lifecycle
from classification.jobs.progress import ProgressWriter
from classification.jobs.self_training import self_training_pool
from classification.jobs.training import build_config, run_training
from dataset_management.normalize import text_key
from dataset_management.selectors import dataset_split_examples
from tests.self_training_support import NEW_ARTICLES, batch_with, disguised, unlabelled_dataset


def _keys(dataset: Any, *splits: str) -> set[str]:
    return {text_key(t) for s in splits
            for t in dataset_split_examples(dataset=dataset, split=s).texts}


@pytest.mark.django_db(transaction=True)
def test_the_texts_self_training_may_label_are_exactly_the_unseen_ones(
        slice_dataset: Any, earlier_model: Any, user: Any, import_file: Callable[..., Any],
        tmp_path: Path, settings: Any) -> None:
    settings.MODEL_ARTIFACT_ROOT = tmp_path / "artifacts"
    unlabelled = unlabelled_dataset(import_file, slice_dataset, tmp_path)
    held = [t for s in ("validation", "test")
            for t in dataset_split_examples(dataset=slice_dataset, split=s).texts[:3]]
    batch = batch_with(user, earlier_model, [disguised(t) for t in held] + NEW_ARTICLES[:2])
    job = lifecycle.training_job_create(
        owner=user, dataset=slice_dataset, model_type="tfidf_logreg", name="", config={
            "self_training_rounds": 1, "self_training_threshold": 0.5,
            "self_training_datasets": [str(unlabelled.pk)],
            "self_training_batches": [str(batch.pk)]})
    config = build_config(job, ProgressWriter(job, interval=60.0))

    pool = self_training_pool(dataset=slice_dataset, config=config,
                              collect=adapt.adapt_corpus_collect)

    held_out = _keys(slice_dataset, "validation", "test") | _keys(unlabelled, "validation",
                                                                   "test")
    seen = _keys(slice_dataset, "train")
    expected = {text_key(t): t for t in dataset_split_examples(dataset=unlabelled,
                                                               split="train").texts
                if text_key(t) not in held_out | seen}
    for title, abstract in NEW_ARTICLES[:2]:
        expected.setdefault(text_key(article_text(title, abstract)),
                            article_text(title, abstract))
    assert sorted(pool.texts) == sorted(expected.values())
    assert pool.counts["equal_to_a_test_row"] >= 3  # the batch's disguised test rows at least
    assert pool.counts["equal_to_a_validation_row"] >= 3
    assert not {text_key(t) for t in pool.texts} & _keys(slice_dataset, "validation", "test")


@pytest.mark.django_db(transaction=True)
def test_a_self_training_job_adds_no_validation_test_or_training_text(
        slice_dataset: Any, earlier_model: Any, user: Any, import_file: Callable[..., Any],
        tmp_path: Path, settings: Any) -> None:
    settings.MODEL_ARTIFACT_ROOT = tmp_path / "artifacts"
    unlabelled = unlabelled_dataset(import_file, slice_dataset, tmp_path)
    held = [t for s in ("validation", "test")
            for t in dataset_split_examples(dataset=slice_dataset, split=s).texts]
    # Every validation and test row, disguised, in a batch: left in, any would be labelled
    # (multi-label at confidence 0.5: every decision is sure, so only rows without a label
    # stay out).
    batch = batch_with(user, earlier_model, [disguised(t) for t in held] + NEW_ARTICLES)
    job = lifecycle.training_job_create(
        owner=user, dataset=slice_dataset, model_type="tfidf_logreg", name="", config={
            "self_training_rounds": 1, "self_training_threshold": 0.5,
            "self_training_datasets": [str(unlabelled.pk)],
            "self_training_batches": [str(batch.pk)]})
    assert lifecycle.training_job_claim(job=job)

    assert run_training(job_id=job.pk) == 0
    job.refresh_from_db()
    assert job.status == "completed", job.reason
    rows = [json.loads(line) for line in (paths.job_output_dir(job.pk)
                                          / "pseudo_labels_round_1.jsonl").open()]
    added = [row["text"] for row in rows]
    assert added
    assert all(row["labels"] for row in rows)
    assert not {text_key(t) for t in added} & _keys(slice_dataset, "validation", "test", "train")
    assert not {text_key(t) for t in added} & _keys(unlabelled, "validation", "test")
    new_keys = {text_key(article_text(t, a)) for t, a in NEW_ARTICLES}
    allowed = new_keys | _keys(unlabelled, "train")
    assert {text_key(t) for t in added} <= allowed
    assert f"self-training round 1: {len(added)} pseudo-labelled rows added" in job.log_tail
