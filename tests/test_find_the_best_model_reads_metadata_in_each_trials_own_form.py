"""Find the best model reads the metadata beside the text: the job hands the search each row's
fields (not texts composed in one form), every trial composes them in its own kind's form, the
cross-validation folds slice the metadata with the texts, and the winner's manifest records the
fields and the form, so prediction composes new rows the same way (and rows without the journal
are still classified). On a corpus whose label only the journal tells, a text-only search is
left near chance: every assertion on the score would fail without the metadata."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from classification.engine import metadata
from classification.engine.metadata_rows import RowsWithMetadata, pooled, read_as
from classification.engine.search import SearchClassifier
from classification.engine.search_scoring import folds
from classification.engine.types import TextData, TrainConfig, article_text
from classification.ml_models import load_classifier
from tests.metadata_support import journal_corpus, journal_csv

FIELDS = [metadata.JOURNAL, metadata.MESH]  # what "auto" resolves to on this corpus


def rows_of(corpus: list[dict[str, Any]], fields: list[str]) -> RowsWithMetadata:
    return RowsWithMetadata([article_text(r["title"], r["abstract"]) for r in corpus],
                            [[r["label"]] for r in corpus],
                            [{"journal": [r["journal"]], "mesh": list(r["mesh"])} for r in corpus],
                            list(fields))


def splits(fields: list[str]) -> tuple[RowsWithMetadata, ...]:
    return tuple(rows_of(journal_corpus(n, seed=s), fields)
                 for n, s in ((160, 1), (40, 2), (80, 3)))


def search(folder: Path, train: TextData, val: TextData) -> SearchClassifier:
    config = TrainConfig.from_dict({"time_budget_minutes": 0.1,
                                    "search_candidates": ["tfidf_logreg"]})
    config.label_names, config.output_dir = ["cardiology", "neurology"], str(folder)
    clf = SearchClassifier()
    clf.fit(train, val, config, lambda event: None, lambda: False)
    return clf


def test_cross_validation_folds_slice_each_rows_metadata_with_its_text() -> None:
    train, val, _ = splits(FIELDS)
    pool = pooled(train, val)
    assert isinstance(pool, RowsWithMetadata)
    assert pool.metadata == train.metadata + val.metadata
    for fit_rows, scored_rows in folds(pool, seed=42):
        for part, rows in ((pool.subset(fit_rows), fit_rows), (pool.subset(scored_rows),
                                                               scored_rows)):
            (texts,) = read_as("baseline", part)
            for text, i in zip(texts.texts, rows, strict=True):
                assert text == metadata.text_with_metadata(
                    pool.texts[i], pool.metadata[i], fields=FIELDS, style=metadata.TOKENS)
                assert "\n\njr_" in text


def test_each_kind_reads_the_metadata_in_its_own_form() -> None:
    train = splits(FIELDS)[0]
    (tokens,), (prefix,) = read_as("baseline", train), read_as("transformer", train)
    journal = train.metadata[0]["journal"][0]
    assert tokens.texts[0].startswith(train.texts[0])
    assert "\n\njr_" in tokens.texts[0]
    assert prefix.texts[0].startswith(f"Journal: {journal}. MeSH: ")
    assert prefix.texts[0].endswith(train.texts[0])


def test_the_winner_reads_the_journal_beats_text_only_and_its_manifest_keeps_it(
        tmp_path: Path) -> None:
    train, val, test = splits(FIELDS)
    plain = search(tmp_path / "plain", *(TextData(d.texts, d.labels) for d in (train, val)))
    with_metadata = search(tmp_path / "meta", train, val)

    text_only = plain.evaluate(TextData(test.texts, test.labels))["macro_f1"]
    assert text_only < 0.7
    assert with_metadata.evaluate(test)["macro_f1"] > 0.85
    with_metadata.save(str(tmp_path / "saved"))
    loaded = load_classifier(str(tmp_path / "saved"))
    assert loaded.config.metadata_used == FIELDS
    assert loaded.config.metadata_style == metadata.TOKENS
    # As prediction composes (mlmodel_texts): with the journal right, without it still answered.
    composed = metadata.texts_with_metadata(test.texts, test.metadata, fields=FIELDS,
                                            style=metadata.TOKENS)
    right = sum(p["labels"] == row for p, row in zip(loaded.predict(composed), test.labels,
                                                      strict=True))
    assert right > 0.85 * len(test)
    bare = metadata.texts_with_metadata(test.texts, [{} for _ in test.texts], fields=FIELDS,
                                        style=metadata.TOKENS)
    assert bare == test.texts
    assert len(loaded.predict(bare)) == len(test)


@pytest.fixture
def made_studies() -> Iterator[list[str]]:
    from classification.mlmodels.searches import search_study_delete

    names: list[str] = []
    yield names
    for name in names:  # a flush empties Django's tables only
        search_study_delete(name=name)


@pytest.mark.django_db(transaction=True)  # the study is written through its own connection
def test_the_search_job_offers_the_fields_and_names_the_winners_on_its_page(
        import_file: Callable[..., Any], user: Any, settings: Any, tmp_path: Path,
        made_studies: list[str]) -> None:
    from classification.jobs import lifecycle
    from classification.jobs.training import run_training
    from classification.mlmodels.prediction import mlmodel_predict, mlmodel_texts
    from classification.mlmodels.searches import search_study_name
    from classification.models import MLModel, TrainingJob

    settings.MODEL_ARTIFACT_ROOT = tmp_path / "artifacts"
    dataset = import_file(journal_csv(tmp_path / "journal.csv", journal_corpus(240, seed=5)))
    model = MLModel.objects.create(owner=user, name="Best", model_type="search", dataset=dataset)
    job = TrainingJob.objects.create(ml_model=model, total_epochs=1, config={
        "time_budget_minutes": 0.1, "search_candidates": ["tfidf_logreg"]})
    made_studies.append(search_study_name(job=job))
    assert lifecycle.training_job_claim(job=job)

    assert run_training(job_id=job.pk) == 0
    job.refresh_from_db()
    model.refresh_from_db()
    assert job.status == "completed", job.reason
    assert "metadata: journal, MeSH offered to every trial" in job.log_tail
    assert "metadata: journal, MeSH as tokens (winner)" in job.log_tail
    assert model.metrics["metadata"]["fields"] == FIELDS
    assert model.metrics["macro_f1"] > 0.85  # the test split, composed as the winner reads
    rows = journal_corpus(20, seed=9)
    texts = [article_text(r["title"], r["abstract"]) for r in rows]
    with_journal = mlmodel_texts(ml_model=model, texts=texts, metadata=[
        {"journal": [r["journal"]]} for r in rows])
    answers = mlmodel_predict(ml_model=model, texts=with_journal)
    assert sum(a["labels"] == [r["label"]] for a, r in zip(answers, rows, strict=True)) >= 17
    without = mlmodel_texts(ml_model=model, texts=texts, metadata=[{} for _ in rows])
    assert len(mlmodel_predict(ml_model=model, texts=without)) == len(rows)
