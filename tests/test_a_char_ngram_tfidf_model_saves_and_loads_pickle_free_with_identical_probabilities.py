"""New TF-IDF models put char_wb 3-5 n-grams beside the word n-grams (a FeatureUnion). Saved,
every member's vocabulary is kept as one array of terms, so the file stays small and its
schema does not grow a node per term; loaded, skops builds it without unpickling anything and
it gives the trained model's probabilities to the last bit."""

from __future__ import annotations

import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest

from classification.engine.sklearn_files import PICKLE_FILE, SKOPS_FILE
from classification.ml_models import TextData, TrainConfig, create_classifier, load_classifier


def _refuse_pickle(*_args: object, **_kwargs: object) -> None:
    raise AssertionError("loading a model unpickled something")


@pytest.mark.parametrize("model_type", ["tfidf_logreg", "tfidf_svm"])
def test_a_char_ngram_model_round_trips_without_pickle_in_a_small_file(
        model_type: str, demo_split: tuple[TextData, TextData, TextData], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    train, val, test = demo_split
    clf = create_classifier(model_type)
    clf.fit(train, val, TrainConfig(), lambda _event: None, lambda: False)
    members = dict(clf.vectorizer.transformer_list)
    assert members["chars"].analyzer == "char_wb"
    terms = sum(len(member.vocabulary_) for member in members.values())
    assert terms > 10_000

    target = tmp_path / "model"
    clf.save(str(target))
    assert (target / SKOPS_FILE).is_file()
    assert not (target / PICKLE_FILE).exists()
    with zipfile.ZipFile(target / SKOPS_FILE) as archive:
        schema = archive.getinfo("schema.json").file_size
    # A vocabulary written as a dict costs a JSON node (over 150 bytes) per term; the head and
    # the vectorizers' settings are a few hundred KB whatever the vocabulary.
    assert schema < terms * 40, (schema, terms)
    assert (target / SKOPS_FILE).stat().st_size < 4_000_000

    for name in ("load", "loads"):
        monkeypatch.setattr(pickle, name, _refuse_pickle)
    monkeypatch.setattr(pickle, "Unpickler", _refuse_pickle)
    loaded = load_classifier(str(target))
    for name, member in loaded.vectorizer.transformer_list:
        assert member.vocabulary_ == members[name].vocabulary_
    np.testing.assert_array_equal(loaded.predict_proba_raw(test.texts),
                                  clf.predict_proba_raw(test.texts))
    assert loaded.predict(test.texts) == clf.predict(test.texts)
    # The trained model kept its own vocabularies: saving works on copies.
    assert all(hasattr(member, "vocabulary_") for member in members.values())
