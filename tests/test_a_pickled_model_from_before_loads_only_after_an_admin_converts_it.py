"""A model saved before artifact format 2 (its parts pickled in model.joblib) is refused until an
administrator vouches for it: `convert_pickled_artifacts` lists it, and only with
--i-trust-these-files rewrites it in skops, after which it predicts exactly as before. With
shared storage the converted tree is published anew and the old one goes."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from classification.engine.artifacts import FORMAT_VERSION, ArtifactRefusedError
from classification.ml_models import TextData, TrainConfig, create_classifier, load_classifier
from classification.models import MLModel
from classification.selectors import mlmodel_artifact_dir
from core import filestore


def format_1_artifact(clf: Any, folder: Path) -> None:
    """What MedLitBot wrote before format 2: the same folder, its parts in a pickle."""
    import joblib

    clf.save(str(folder))
    (folder / "model.skops").unlink()
    joblib.dump({"vectorizer": clf.vectorizer, "head": clf.head}, folder / "model.joblib")
    manifest = json.loads((folder / "manifest.json").read_text())
    (folder / "manifest.json").write_text(json.dumps({**manifest, "format_version": 1}))


@pytest.fixture(scope="module")
def trained(demo_split: tuple[TextData, TextData, TextData]) -> Any:
    clf = create_classifier("tfidf_logreg")
    clf.fit(demo_split[0], demo_split[1], TrainConfig(), lambda e: None, lambda: False)
    return clf


def convert(*args: str) -> str:
    out = io.StringIO()
    call_command("convert_pickled_artifacts", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


@pytest.mark.django_db
def test_a_pickled_model_is_refused_listed_then_converted_on_the_admins_word(
        trained: Any, demo_split: tuple, user: Any, tmp_path: Path) -> None:
    folder = tmp_path / "old-model"
    format_1_artifact(trained, folder)
    model = MLModel.objects.create(owner=user, name="Old", model_type="tfidf_logreg",
                                   status=MLModel.Status.TRAINED, artifact_path=str(folder))
    with pytest.raises(ArtifactRefusedError, match="convert_pickled_artifacts"):
        load_classifier(str(folder))

    listed = convert()
    assert f"model {model.pk} (Old): 1 pickled folder(s)" in listed
    assert "run again with --i-trust-these-files" in listed
    assert (folder / "model.joblib").is_file()  # listing converts nothing

    assert "converted 1 model(s)" in convert("--i-trust-these-files")
    assert sorted(p.name for p in folder.iterdir()) == ["manifest.json", "model.skops"]
    manifest = json.loads((folder / "manifest.json").read_text())
    assert (manifest["format_version"], manifest["converted_from"]) == (
        FORMAT_VERSION, "model.joblib (artifact format 1)")
    texts = demo_split[2].texts
    assert load_classifier(str(folder)).predict(texts) == trained.predict(texts)
    assert "nothing to convert" in convert("--i-trust-these-files")


@pytest.mark.django_db
def test_with_shared_storage_the_converted_tree_replaces_the_published_one(
        trained: Any, demo_split: tuple, user: Any, shared_storage: Path, settings: Any,
        tmp_path: Path) -> None:
    settings.MODEL_ARTIFACT_ROOT = tmp_path / "artifacts"
    folder = tmp_path / "artifacts" / "old-model"
    format_1_artifact(trained, folder)
    old = filestore.tree_publish(folder=folder)
    model = MLModel.objects.create(owner=user, name="Old", model_type="tfidf_logreg",
                                   artifact_digest=old,
                                   status=MLModel.Status.TRAINED, artifact_path=str(folder))

    assert "converted 1 model(s)" in convert("--i-trust-these-files")
    model.refresh_from_db()
    assert model.artifact_digest not in ("", old)
    published = {p.parent.name for p in (shared_storage / "trees").glob("*/MANIFEST.json")}
    assert published == {model.artifact_digest}  # the pickled tree is gone
    assert [p.name for p in Path(settings.MODEL_ARTIFACT_ROOT).iterdir()] == ["old-model"]

    # Another node: its own cache, nothing of this one's; it loads the converted tree.
    settings.FILE_CACHE_DIR = str(tmp_path / "node-b" / "cache")
    other = mlmodel_artifact_dir(ml_model=model)
    assert other is not None
    assert other.is_relative_to(tmp_path / "node-b" / "cache")
    assert (other / "model.skops").is_file()
    texts = demo_split[2].texts
    assert load_classifier(str(other)).predict(texts) == trained.predict(texts)
