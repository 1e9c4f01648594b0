"""Saved artifacts load back and predict exactly as the trained model did."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from classification.engine.artifacts import FORMAT_VERSION
from classification.ml_models import (
    TrainConfig,
    TrainConfigError,
    clear_classifier_cache,
    create_classifier,
    get_cached_classifier,
    load_classifier,
)


def test_tiny_bert_save_then_load_gives_identical_predictions(
    trained_tiny_bert: tuple, demo_split: tuple, tmp_path: Path
) -> None:
    clf, _ = trained_tiny_bert
    texts = demo_split[2].texts
    target = tmp_path / "artifact"
    clf.save(str(target))
    manifest = json.loads((target / "manifest.json").read_text())
    assert manifest["model_type"] == "custom"
    assert manifest["label_names"] == clf.label_names
    assert manifest["multi_label"] is True
    assert len(manifest["thresholds"]) == len(clf.label_names)
    assert manifest["device_plan"]["device"] == "cpu"
    assert "transformers" in manifest["library_versions"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # temp dir swapped in
    assert load_classifier(str(target)).predict(texts) == clf.predict(texts)


def test_saving_over_an_existing_artifact_replaces_it(
    trained_tiny_bert: tuple, tmp_path: Path
) -> None:
    clf, _ = trained_tiny_bert
    target = tmp_path / "artifact"
    clf.save(str(target))
    (target / "stale.txt").write_text("old")
    clf.save(str(target))
    assert not (target / "stale.txt").exists()
    assert (target / "manifest.json").is_file()


@pytest.mark.parametrize("model_type", ["tfidf_logreg", "tfidf_svm"])
def test_tfidf_save_then_load_gives_identical_predictions_without_a_pickle(
    model_type: str, demo_split: tuple, tmp_path: Path
) -> None:
    train, val, test = demo_split
    clf = create_classifier(model_type)
    clf.fit(train, val, TrainConfig(), lambda e: None, lambda: False)
    clf.save(str(tmp_path / "tfidf"))
    # skops, not pickle: artifacts.py and sklearn_files.py say why.
    assert sorted(p.name for p in (tmp_path / "tfidf").iterdir()) == [
        "manifest.json", "model.skops"]
    manifest = json.loads((tmp_path / "tfidf" / "manifest.json").read_text())
    assert manifest["format_version"] == FORMAT_VERSION
    loaded = load_classifier(str(tmp_path / "tfidf"))
    assert np.array_equal(loaded.predict_proba(test.texts), clf.predict_proba(test.texts))
    # words beside char n-grams (a FeatureUnion): each member's vocabulary comes back
    for (name, member), (_, trained) in zip(loaded.vectorizer.transformer_list,
                                            clf.vectorizer.transformer_list, strict=True):
        assert member.vocabulary_ == trained.vocabulary_, name
    assert loaded.predict(test.texts) == clf.predict(test.texts)


def test_cached_loading_returns_the_same_object_until_the_artifact_changes(
    demo_split: tuple, tmp_path: Path
) -> None:
    train, val, _ = demo_split
    clear_classifier_cache()
    clf = create_classifier("tfidf_logreg")
    clf.fit(train, val, TrainConfig(), lambda e: None, lambda: False)
    path = str(tmp_path / "m")
    clf.save(path)
    first = get_cached_classifier(path)
    assert get_cached_classifier(path) is first
    import os
    import time

    clf.save(path)
    manifest = Path(path) / "manifest.json"
    future = time.time() + 5
    os.utime(manifest, (future, future))  # mtime resolution can hide a save within the same tick
    assert get_cached_classifier(path) is not first


def test_a_model_saved_with_settings_from_before_their_bounds_still_loads(
    demo_split: tuple, tmp_path: Path
) -> None:
    train, val, test = demo_split
    clf = create_classifier("tfidf_logreg")
    clf.fit(train, val, TrainConfig(seed=7), lambda e: None, lambda: False)
    clf.save(str(tmp_path / "tfidf"))
    manifest_path = tmp_path / "tfidf" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    # The API once took any value; TF-IDF ignores epochs, so such a model trained fine.
    manifest["config"].update(epochs=1000, learning_rate="nan")
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(TrainConfigError):
        TrainConfig.from_dict(manifest["config"])

    loaded = load_classifier(str(tmp_path / "tfidf"))

    assert loaded.predict(test.texts) == clf.predict(test.texts)
    assert (loaded.config.epochs, loaded.config.seed) == (TrainConfig().epochs, 7)
