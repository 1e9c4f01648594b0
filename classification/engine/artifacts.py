"""Artifact folders, written beside the target then swapped in: readers never see half a model.

Every manifest records the artifact format it was written in. A reader refuses a format newer
than it knows rather than guess at files it cannot read safely, and reads an older one through
UPGRADES, which says for each format what changed and how it is read now. Format 2 keeps
scikit-learn parts in skops files (engine/sklearn_files.py); format 1 kept them in pickles,
which are never loaded.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

MANIFEST = "manifest.json"
# 1: scikit-learn parts pickled in model.joblib. 2: in model.skops, loaded without pickle.
# 3: the manifest adds "calibration" (engine/calibration.py), "recall_target" and
# "recall_thresholds"; the files are as in 2.
FORMAT_VERSION = 3
_LIBRARIES = (
    "torch",
    "transformers",
    "tokenizers",
    "datasets",
    "accelerate",
    "scikit-learn",
    "numpy",
)


def library_versions() -> dict[str, str]:
    versions = {}
    for name in _LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def _jsonable(value: Any) -> Any:
    """Numpy scalars and tuples sneak into metrics; json.dumps must never fail at save time."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item") and callable(value.item):
        return value.item()
    return value


def atomic_save(path: str, write: Callable[[Path], None], manifest: dict[str, Any]) -> None:
    """write(tmp) fills a temp dir beside path; manifest.json is added, then it is swapped in."""
    target = Path(path).resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    try:
        write(tmp)
        manifest = {
            "format_version": FORMAT_VERSION,
            "library_versions": library_versions(),
            **manifest,
        }
        (tmp / MANIFEST).write_text(json.dumps(_jsonable(manifest), indent=2), encoding="utf-8")
        if target.exists():
            # os.replace cannot replace a non-empty directory: move the old one aside first.
            old = target.parent / f".{target.name}.old-{os.getpid()}"
            os.replace(target, old)
            os.replace(tmp, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


class ArtifactRefusedError(ValueError):
    """An artifact this code will not load: a newer format, a pickle, or a type not trusted.

    A ValueError, so the API and the jobs show its message as they do any other refusal."""


def _format_1_to_2(manifest: dict[str, Any]) -> dict[str, Any]:
    """Format 2 moved the scikit-learn parts from a pickle (model.joblib) to model.skops and
    changed nothing else: the manifest reads as it is, and a transformer's files load as they
    were saved. A pickle still in the folder is explained where it is found
    (sklearn_files.parts_load), not converted here: converting it means unpickling it, which is
    an administrator's decision to trust the file (manage.py convert_pickled_artifacts)."""
    return manifest


def _format_2_to_3(manifest: dict[str, Any]) -> dict[str, Any]:
    """Format 3 added calibration and recall thresholds, fitted on validation at the end of
    training. A format 2 model had neither: it reads as uncalibrated (the identity map, so it
    predicts exactly as before) with no recall thresholds (threshold=recall is refused with a
    sentence saying to retrain)."""
    return {**manifest, "calibration": {"method": "none"}, "recall_target": None,
            "recall_thresholds": []}


# How a manifest of format N is read as format N + 1: one entry per format before FORMAT_VERSION
# (a test fails when a new format comes without one).
UPGRADES: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {
    1: _format_1_to_2, 2: _format_2_to_3}


def newer_format_message(*, version: int, path: str) -> str:
    return (f"This model was saved by a newer MedLitBot (format {version}); this install reads "
            f"up to {FORMAT_VERSION}: upgrade, or retrain it here. Upgrade every worker and the "
            f"web alike; the model's files are in {path}.")


def read_manifest(path: str) -> dict[str, Any]:
    """The artifact's manifest, read as the current format: every model is loaded through here
    (ml_models.load_classifier), so no loader sees a format it does not know."""
    manifest_path = Path(path) / MANIFEST
    if not manifest_path.is_file():
        raise FileNotFoundError(f"No {MANIFEST} in {path}: not a MedLitBot model artifact")
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    # Format 1 predates the field: a manifest without one is format 1.
    version = manifest.get("format_version", 1) if isinstance(manifest, dict) else None
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ArtifactRefusedError(f"{manifest_path} has no valid format_version: not a "
                                   f"MedLitBot model artifact, or a damaged one.")
    if version > FORMAT_VERSION:
        # Its files may be laid out in a way this code would misread: never guess.
        raise ArtifactRefusedError(newer_format_message(version=version, path=path))
    for older in range(version, FORMAT_VERSION):
        manifest = UPGRADES[older](manifest)
    return manifest
