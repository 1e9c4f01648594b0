"""TF-IDF learns from a metadata field given as field-prefixed tokens (engine/metadata.py): on a
corpus whose label only the journal tells, the text-only model is left near chance and the same
model with the journal's tokens gets it right. The first half would pass without metadata, the
second could not."""

from __future__ import annotations

from classification.engine import metadata
from classification.engine.types import TextData, TrainConfig, article_text_with_metadata
from classification.ml_models import create_classifier
from tests.metadata_support import journal_corpus


def _data(rows: list[dict], fields: list[str]) -> TextData:
    return TextData(
        [article_text_with_metadata(r["title"], r["abstract"], r, fields=fields,
                                    style=metadata.TOKENS) for r in rows],
        [[r["label"]] for r in rows])


def _test_macro_f1(fields: list[str]) -> float:
    train, val, test = (journal_corpus(n, seed=s) for n, s in ((160, 1), (40, 2), (80, 3)))
    clf = create_classifier("tfidf_logreg")
    clf.fit(_data(train, fields), _data(val, fields), TrainConfig(seed=0), lambda e: None,
            lambda: False)
    return clf.evaluate(_data(test, fields))["macro_f1"]


def test_the_text_alone_is_left_near_chance() -> None:
    assert _test_macro_f1([]) < 0.7


def test_the_journal_as_field_tokens_gives_the_label() -> None:
    assert _test_macro_f1([metadata.JOURNAL]) > 0.85


def test_the_tokens_are_prefixed_by_field_and_one_per_value() -> None:
    row = {"journal": ["The Lancet"], "mesh": ["Neoplasms/*drug therapy", "Humans"],
           "publication_types": ["Randomized Controlled Trial"], "keywords": ["statins"]}
    text = article_text_with_metadata("Title", "Abstract", metadata.metadata_extract(
        citation=None, record=row), fields=list(metadata.FIELDS), style=metadata.TOKENS)
    assert text == ("Title\n\nAbstract\n\njr_the_lancet mesh_neoplasms mesh_humans "
                    "pt_randomized_controlled_trial kw_statins")
