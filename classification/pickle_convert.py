"""Moving models saved before artifact format 2 off pickles, once, on an administrator's word.

Format 1 kept a scikit-learn model's parts in a pickle (model.joblib). MedLitBot no longer loads
those: a pickle runs whatever code it holds. A model trained before the upgrade is refused with a
message naming `manage.py convert_pickled_artifacts`, which lists such models and, only with
--i-trust-these-files, unpickles each one this single time and rewrites it in the skops format.

With shared storage a published tree is named by its content, so it is never changed in place:
the converted copy is published as a new tree, the model row is pointed at it, and the old tree
goes once no row names it.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from classification.engine.sklearn_files import pickled_folders, pickled_parts_convert
from classification.models import MLModel
from classification.selectors import mlmodel_artifact_dir
from core import filestore


@dataclass
class PickledModels:
    found: list[str] = field(default_factory=list)  # "model 3 (Name): 2 pickled folder(s)"
    converted: int = 0
    missing: list[str] = field(default_factory=list)  # what this node does not have


def _convert_published(*, model: MLModel, folder: Path) -> None:
    root = Path(settings.MODEL_ARTIFACT_ROOT)
    root.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".convert-{model.pk}-", dir=root))
    try:
        copy = work / "artifact"
        shutil.copytree(folder, copy)  # real copies: cached files may be hard links
        for pickled in pickled_folders(folder=copy):
            pickled_parts_convert(folder=pickled)
        digest = filestore.tree_publish(folder=copy)
        old = model.artifact_digest
        if MLModel.objects.filter(pk=model.pk, artifact_digest=old).update(artifact_digest=digest):
            from classification.mlmodels.deletion import artifact_tree_forget

            artifact_tree_forget(digest=old)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def pickled_models_convert(*, convert: bool) -> PickledModels:
    """Every trained model whose artifact still holds a pickle; converted when `convert` (the
    administrator vouched for the files). Safe to run again: a converted model has none."""
    done = PickledModels()
    for model in MLModel.objects.filter(status=MLModel.Status.TRAINED).exclude(artifact_path=""):
        folder = mlmodel_artifact_dir(ml_model=model)
        if folder is None:
            done.missing.append(f"model {model.pk}: {model.artifact_path}")
            continue
        pickled = pickled_folders(folder=folder)
        if not pickled:
            continue
        done.found.append(f"model {model.pk} ({model.name}): {len(pickled)} pickled folder(s) "
                          f"in {folder}")
        if not convert:
            continue
        if model.artifact_digest and filestore.shared_enabled():
            _convert_published(model=model, folder=folder)
        else:
            for one in pickled:
                pickled_parts_convert(folder=one)
        done.converted += 1
    return done
