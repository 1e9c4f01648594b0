"""Loading a model checks the artifact format its manifest records. A format newer than the code
is refused with what to do (upgrade, or retrain here), for a scikit-learn model and a transformer
alike; the current format loads; an older one is read as the current one where the change was
mechanical (a format-1 transformer, or a manifest from before the field existed) and explained
where it is not (a format-1 pickle, which is never unpickled to convert it)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import joblib
import pytest

from classification.engine.artifacts import FORMAT_VERSION, UPGRADES, ArtifactRefusedError
from classification.engine.sklearn_files import PICKLE_FILE, SKOPS_FILE
from classification.ml_models import TextData, TrainConfig, create_classifier, load_classifier


@pytest.fixture(scope="module")
def tfidf_saved(demo_split: tuple[TextData, TextData, TextData],
                tmp_path_factory: pytest.TempPathFactory) -> Path:
    train, val, _ = demo_split
    clf = create_classifier("tfidf_logreg")
    clf.fit(train, val, TrainConfig(), lambda e: None, lambda: False)
    path = tmp_path_factory.mktemp("tfidf") / "model"
    clf.save(str(path))
    return path


@pytest.fixture
def tfidf(tfidf_saved: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(tfidf_saved, tmp_path / "tfidf"))


@pytest.fixture
def transformer(trained_tiny_bert: tuple[Any, list[dict]], tmp_path: Path) -> Path:
    path = tmp_path / "bert"
    trained_tiny_bert[0].save(str(path))
    return path


def set_format(folder: Path, version: int | None) -> None:
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest.pop("format_version")
    if version is not None:
        manifest["format_version"] = version
    (folder / "manifest.json").write_text(json.dumps(manifest))


def newer_refusal(folder: Path) -> str:
    return (f"This model was saved by a newer MedLitBot (format {FORMAT_VERSION + 1}); this "
            f"install reads up to {FORMAT_VERSION}: upgrade, or retrain it here. Upgrade every "
            f"worker and the web alike; the model's files are in {folder}.")


@pytest.mark.parametrize("kind", ["tfidf", "transformer"])
def test_a_newer_format_is_refused_with_what_to_do(kind: str, request: Any) -> None:
    folder = request.getfixturevalue(kind)
    set_format(folder, FORMAT_VERSION + 1)
    with pytest.raises(ArtifactRefusedError) as refused:
        load_classifier(str(folder))
    assert str(refused.value) == newer_refusal(folder)


def test_the_current_format_loads_and_predicts(
        tfidf: Path, transformer: Path, demo_split: tuple[TextData, TextData, TextData]) -> None:
    texts = demo_split[2].texts[:5]
    for folder in (tfidf, transformer):
        assert json.loads((folder / "manifest.json").read_text())["format_version"] == (
            FORMAT_VERSION)
        assert len(load_classifier(str(folder)).predict(texts)) == len(texts)


@pytest.mark.parametrize("version", [1, None], ids=["format-1", "no-format-field"])
def test_an_older_transformer_is_read_as_the_current_format(
        version: int | None, transformer: Path,
        demo_split: tuple[TextData, TextData, TextData]) -> None:
    texts = demo_split[2].texts[:5]
    current = load_classifier(str(transformer))
    set_format(transformer, version)
    older = load_classifier(str(transformer))
    # Its settings as saved (each load plans its own device, so the numbers are not compared:
    # on a CPU with bf16 the dtype is chosen by timing).
    assert (older.label_names, older.thresholds, older.max_length) == (
        current.label_names, current.thresholds, current.max_length)
    assert [set(p["probabilities"]) for p in older.predict(texts)] == [
        set(current.label_names)] * len(texts)


def test_an_older_pickled_model_is_explained_not_unpickled(tfidf: Path) -> None:
    loaded = load_classifier(str(tfidf))
    joblib.dump({"vectorizer": loaded.vectorizer, "head": loaded.head}, tfidf / PICKLE_FILE)
    (tfidf / SKOPS_FILE).unlink()
    set_format(tfidf, 1)
    with pytest.raises(ArtifactRefusedError) as refused:
        load_classifier(str(tfidf))
    assert "saved by an older MedLitBot as a pickle" in str(refused.value)
    assert "convert_pickled_artifacts --i-trust-these-files" in str(refused.value)


def test_every_format_before_the_current_one_says_how_it_is_read() -> None:
    assert set(UPGRADES) == set(range(1, FORMAT_VERSION))
