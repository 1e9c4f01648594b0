"""An ensemble reads the metadata its members read: one text per row reaches every member, so
when the members read the same fields in the same form, the ensemble job composes the validation
rows that way before the members score them (the weights are tuned on what they will read in
use), records the form in its config (prediction composes new rows the same way, and a row
without the journal is still classified), and says so in the job's log. Members reading
metadata differently leave it reading text only, saying why. On a corpus whose label only the
journal tells, members handed text alone are left near chance."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from classification.engine import metadata
from classification.engine.ensemble import EnsembleClassifier
from classification.engine.metadata_rows import RowsWithMetadata, ensemble_reading
from classification.engine.types import TextData, TrainConfig
from classification.ml_models import create_classifier, load_classifier
from tests.metadata_support import journal_corpus, journal_csv

FIELDS = [metadata.JOURNAL, metadata.MESH]


def reads(model_type: str, fields: list[str], style: str = "") -> SimpleNamespace:
    return SimpleNamespace(model_type=model_type, config=TrainConfig(
        metadata_used=fields, metadata_style=style))


def test_members_reading_the_same_fields_in_one_form_make_the_ensemble_read_them() -> None:
    fields, style, why = ensemble_reading([reads("tfidf_logreg", ["journal"], "tokens"),
                                           reads("tfidf_svm", ["journal"], "tokens")])
    assert (fields, style) == (["journal"], "tokens")
    assert why == "journal as tokens, as its members read them"


def test_a_text_only_tfidf_member_may_join_field_tokens_but_a_text_only_encoder_may_not() -> None:
    assert ensemble_reading([reads("tfidf_logreg", ["journal"], "tokens"),
                             reads("tfidf_svm", [])])[:2] == (["journal"], "tokens")
    fields, _, why = ensemble_reading([reads("tfidf_logreg", ["journal"], "tokens"),
                                       reads("minilm", [])])
    assert fields == []
    assert why == ("text only: minilm read text only, and the tokens of the others would be "
                   "new to it")


def test_members_reading_metadata_in_different_forms_leave_it_text_only() -> None:
    fields, style, why = ensemble_reading([reads("tfidf_logreg", ["journal"], "tokens"),
                                           reads("minilm", ["journal"], "prefix")])
    assert (fields, style) == ([], "")
    assert why.startswith("text only: the members read metadata in different forms")


def split_rows(dataset: Any, model_type: str) -> tuple[tuple[Any, ...], TrainConfig, str]:
    """The three splits and the config as the training job's metadata step makes them."""
    from classification.jobs.training import load_split
    from classification.jobs.training_metadata import splits_with_metadata

    config = TrainConfig(label_names=list(dataset.label_names))
    job = SimpleNamespace(ml_model=SimpleNamespace(model_type=model_type, dataset=dataset))
    splits, line = splits_with_metadata(job=job, config=config, splits=tuple(
        load_split(dataset, s) for s in ("train", "validation", "test")))
    return splits, config, line


@pytest.mark.django_db
def test_the_ensemble_job_tunes_its_weights_on_the_members_metadata(
        import_file: Callable[..., Any], tmp_path: Path) -> None:
    dataset = import_file(journal_csv(tmp_path / "journal.csv", journal_corpus(300, seed=5)))
    (train, val, _), member_config, _ = split_rows(dataset, "tfidf_logreg")
    assert member_config.metadata_used == FIELDS
    paths = []
    for kind in ("tfidf_logreg", "tfidf_svm"):
        member = create_classifier(kind)
        member.fit(train, val, member_config, lambda event: None, lambda: False)
        member.save(str(tmp_path / kind))
        paths.append(str(tmp_path / kind))

    (rows, val_rows, test_rows), config, line = split_rows(dataset, "ensemble")
    assert isinstance(val_rows, RowsWithMetadata)
    assert line.startswith("metadata: the ensemble reads what its members read")
    config.member_paths = paths
    events: list[dict[str, Any]] = []
    ensemble = EnsembleClassifier()
    ensemble.fit(rows, val_rows, config, events.append, lambda: False)

    assert "metadata: journal, MeSH as tokens, as its members read them" in [
        e.get("message") for e in events]
    assert ensemble.metrics["macro_f1"] > 0.85  # tuned on what the members read
    assert ensemble.evaluate(test_rows)["macro_f1"] > 0.85
    # Members handed the text alone (what an ensemble job gave them before) are near chance.
    blind = EnsembleClassifier.from_members(ensemble.members, val=TextData(
        val_rows.texts, val_rows.labels), config=TrainConfig(label_names=config.label_names))
    assert blind.evaluate(TextData(test_rows.texts, test_rows.labels))["macro_f1"] < 0.7
    ensemble.save(str(tmp_path / "ensemble"))
    loaded = load_classifier(str(tmp_path / "ensemble"))
    assert (loaded.config.metadata_used, loaded.config.metadata_style) == (FIELDS, "tokens")
    bare = metadata.texts_with_metadata(test_rows.texts, [{} for _ in test_rows.texts],
                                        fields=FIELDS, style="tokens")
    assert len(loaded.predict(bare)) == len(test_rows)  # no journal: still classified
