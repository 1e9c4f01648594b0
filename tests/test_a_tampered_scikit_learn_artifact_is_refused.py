"""A scikit-learn artifact is loaded with skops from trusted types only: a file swapped for a
pickle, a skops file naming a class or a function of an attacker's, an old-format pickle and a
format newer than the code are all refused with a clear message, and the payload each would run
(it creates a file) never runs."""

from __future__ import annotations

import json
import pickle
import shutil
from pathlib import Path

import pytest

from classification.engine.artifacts import FORMAT_VERSION, ArtifactRefusedError
from classification.engine.sklearn_files import PICKLE_FILE, SKOPS_FILE, parts_save
from classification.ml_models import TextData, TrainConfig, create_classifier, load_classifier


class WritesAFileWhenBuilt:
    """What an attacker would put in a file: building it runs code (here, creates a file)."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __setstate__(self, state: dict) -> None:
        Path(state["marker"]).write_text("code ran")


class WritesAFileWhenUnpickled:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple:
        return open, (str(self.marker), "w")  # unpickling calls open(marker, "w"): a new file


def write_marker(text: str) -> str:
    Path(text).write_text("code ran")
    return text


@pytest.fixture(scope="module")
def saved(demo_split: tuple[TextData, TextData, TextData],
          tmp_path_factory: pytest.TempPathFactory) -> Path:
    train, val, _ = demo_split
    clf = create_classifier("tfidf_svm")  # its calibrators are the extra types we trust
    clf.fit(train, val, TrainConfig(), lambda e: None, lambda: False)
    path = tmp_path_factory.mktemp("trained") / "svm"
    clf.save(str(path))
    return path


@pytest.fixture
def artifact(saved: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "artifact"
    shutil.copytree(saved, copy)
    return copy


def test_the_untampered_artifact_loads_and_holds_no_pickle(
        artifact: Path, demo_split: tuple) -> None:
    assert sorted(p.name for p in artifact.iterdir()) == ["manifest.json", SKOPS_FILE]
    assert json.loads((artifact / "manifest.json").read_text())["format_version"] == FORMAT_VERSION
    assert len(load_classifier(str(artifact)).predict(demo_split[2].texts)) == len(demo_split[2])


def test_a_pickle_put_in_place_of_the_skops_file_is_refused_and_never_run(
        artifact: Path, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    payload = pickle.dumps(WritesAFileWhenUnpickled(marker))
    pickle.loads(payload)  # the payload is real: unpickling it creates the file
    assert marker.exists()
    marker.unlink()

    (artifact / SKOPS_FILE).write_bytes(payload)
    with pytest.raises(ArtifactRefusedError, match="not a readable skops file"):
        load_classifier(str(artifact))
    assert not marker.exists()


def test_an_old_format_pickle_is_refused_with_how_to_go_on_and_never_run(
        artifact: Path, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    (artifact / SKOPS_FILE).unlink()
    (artifact / PICKLE_FILE).write_bytes(pickle.dumps(WritesAFileWhenUnpickled(marker)))
    manifest = json.loads((artifact / "manifest.json").read_text())
    (artifact / "manifest.json").write_text(json.dumps({**manifest, "format_version": 1}))

    with pytest.raises(ArtifactRefusedError) as refused:
        load_classifier(str(artifact))
    assert "saved by an older MedLitBot as a pickle" in str(refused.value)
    assert "manage.py convert_pickled_artifacts --i-trust-these-files" in str(refused.value)
    assert not marker.exists()


def test_a_skops_file_holding_an_untrusted_class_is_refused_and_never_built(
        artifact: Path, tmp_path: Path) -> None:
    import skops.io

    marker = tmp_path / "pwned"
    loaded = load_classifier(str(artifact))
    parts_save(folder=artifact, parts={"vectorizer": loaded.vectorizer,
                                       "head": WritesAFileWhenBuilt(str(marker))})
    with pytest.raises(ArtifactRefusedError) as refused:
        load_classifier(str(artifact))
    assert f"{__name__}.WritesAFileWhenBuilt" in str(refused.value)
    assert "nothing in it was run" in str(refused.value)
    assert not marker.exists()
    # The payload is real: a loader told to trust that class builds it, and the file appears.
    skops.io.load(artifact / SKOPS_FILE, trusted=[
        f"{__name__}.WritesAFileWhenBuilt", "sklearn.calibration._CalibratedClassifier",
        "sklearn.calibration._SigmoidCalibration"])
    assert marker.exists()


def test_a_trusted_estimator_carrying_an_untrusted_function_is_refused(
        artifact: Path, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    loaded = load_classifier(str(artifact))
    # A vectorizer whose preprocessor runs the attacker's function on every text it sees (the
    # word member of the union that puts char n-grams beside the words).
    loaded.vectorizer.set_params(words__preprocessor=write_marker)
    parts_save(folder=artifact, parts={"vectorizer": loaded.vectorizer, "head": loaded.head})
    with pytest.raises(ArtifactRefusedError, match=f"{__name__}.write_marker"):
        load_classifier(str(artifact)).predict([str(marker)])
    assert not marker.exists()


def test_a_format_newer_than_the_code_is_refused(artifact: Path) -> None:
    manifest = json.loads((artifact / "manifest.json").read_text())
    newer = FORMAT_VERSION + 1
    (artifact / "manifest.json").write_text(json.dumps({**manifest, "format_version": newer}))
    with pytest.raises(ArtifactRefusedError, match=rf"newer MedLitBot \(format {newer}\); "
                                                   f"this install reads up to {FORMAT_VERSION}"):
        load_classifier(str(artifact))
