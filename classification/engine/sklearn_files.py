"""scikit-learn parts on disk: saved and loaded with skops, never unpickled.

Why skops and not "joblib behind a digest": a pickle runs whatever code its bytes name the moment
it is loaded, so anyone who can write to the artifact folder, a node's file cache or the shared
bucket could run code on every worker. A digest check only moves that trust to wherever the
digest is kept (the database row, the manifest beside the file), and an artifact folder on one
machine has no digest at all. skops (https://skops.readthedocs.io) stores an estimator as a JSON
schema plus numpy arrays and rebuilds it without pickle, constructing only types it trusts:
scikit-learn's estimators, numpy and scipy containers, and the few extra names in TRUSTED_TYPES.
Anything else in a file, say a function or a class of the attacker's, is refused before any
object is built, so a tampered file can at worst hold wrong numbers, never run code.

Format 1 artifacts kept the same parts in a pickle, model.joblib. They are refused with a message
that says how to go on: retrain, or have an administrator who trusts the files convert them once
with `manage.py convert_pickled_artifacts --i-trust-these-files` (pickled_parts_convert here).
"""

from __future__ import annotations

import copy
import importlib.abc
import json
import shutil
import sys
import threading
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from .artifacts import MANIFEST, ArtifactRefusedError, atomic_save

SKOPS_FILE = "model.skops"
PICKLE_FILE = "model.joblib"  # artifact format 1; never loaded by the serving code
# Beyond skops's own defaults, the only types our estimators hold (checked with
# skops.io.get_untrusted_types on every head in baselines.py under scikit-learn 1.9.1): the
# calibrated SVM's per-class calibrators. Both are plain data holders in scikit-learn.
TRUSTED_TYPES = (
    "sklearn.calibration._CalibratedClassifier",
    "sklearn.calibration._SigmoidCalibration",
)
# The vectorizer's vocabulary is a dict of up to 200,000 terms, which skops writes as one JSON
# node per entry: 22 MB and 3 s to load for 28k terms. Kept as a numpy array of the terms in
# column order instead, it is 1 MB and loads in milliseconds. A FeatureUnion of vectorizers (words
# beside char n-grams) keeps a dict of such arrays, one per member, under the same key.
_TERMS = "{}__terms"
_CONVERT_HINT = (
    "Retrain the model, or, if you trust where this file came from, have an administrator "
    "convert it once with `python manage.py convert_pickled_artifacts --i-trust-these-files`."
)


class _NoTorchInThisThread(importlib.abc.MetaPathFinder):
    """Refuses torch to the one thread importing skops; every other thread imports as usual."""

    def __init__(self) -> None:
        self.thread = threading.get_ident()

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        if threading.get_ident() == self.thread and fullname.partition(".")[0] == "torch":
            raise ModuleNotFoundError(f"{fullname} is not needed to list scikit-learn's "
                                      f"estimators", name=fullname)


def _skops_io() -> ModuleType:
    """skops.io, imported without dragging torch in.

    At import, skops lists scikit-learn's estimators with sklearn.utils.all_estimators, which
    walks every sklearn package, vendored array_api_compat.torch included, and so imports
    torch: 1.2 s and hundreds of MB in a TF-IDF worker that never needs it (the torch-free
    TF-IDF job is a tested promise). The walk ignores packages that fail to import, so torch
    is refused to this thread for that import only; where torch is already loaded, nothing is
    refused. 0.3 s, once per process."""
    if "skops.io" in sys.modules or "torch" in sys.modules:
        import skops.io

        return skops.io
    blocker = _NoTorchInThisThread()
    sys.meta_path.insert(0, blocker)
    try:
        import skops.io
    finally:
        sys.meta_path.remove(blocker)
    return skops.io


def _bare(vectorizer: Any) -> tuple[Any, np.ndarray] | None:
    """(a shallow copy without its vocabulary, the terms in column order), or None for an object
    without a fitted vocabulary dict. The fitted model itself is left untouched."""
    vocabulary = getattr(vectorizer, "vocabulary_", None)
    if not isinstance(vocabulary, dict):
        return None
    bare = copy.copy(vectorizer)
    del bare.vocabulary_
    return bare, np.array(sorted(vocabulary, key=vocabulary.__getitem__))


def _without_vocabulary(parts: dict[str, Any]) -> dict[str, Any]:
    out = dict(parts)
    for name, value in parts.items():
        plain = _bare(value)
        if plain is not None:
            out[name], out[_TERMS.format(name)] = plain
            continue
        members = getattr(value, "transformer_list", None)
        if not isinstance(members, list):
            continue
        # A FeatureUnion (words beside char n-grams): each member's terms, by member name. The
        # union is copied with its own list, so the fitted one keeps its vocabularies.
        terms: dict[str, np.ndarray] = {}
        bare_members = []
        for member, transformer in members:
            plain = _bare(transformer)
            if plain is None:
                bare_members.append((member, transformer))
            else:
                bare_members.append((member, plain[0]))
                terms[member] = plain[1]
        if terms:
            union = copy.copy(value)
            union.transformer_list = bare_members
            out[name], out[_TERMS.format(name)] = union, terms
    return out


def _with_vocabulary(parts: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for name, value in parts.items():
        terms = parts.get(_TERMS.format(name))
        if isinstance(terms, dict):
            for member, transformer in value.transformer_list:
                if member in terms:
                    transformer.vocabulary_ = _vocabulary(terms[member])
        elif terms is not None:
            value.vocabulary_ = _vocabulary(terms)
        if not name.endswith(_TERMS.format("")):
            out[name] = value
    return out


def _vocabulary(terms: np.ndarray) -> dict[str, int]:
    return {term: i for i, term in enumerate(terms.tolist())}


def parts_save(*, folder: Path, parts: dict[str, Any]) -> None:
    """Write the fitted scikit-learn objects in `parts` to folder/model.skops."""
    skops_io = _skops_io()
    # Deflate level 1: a third of the stored size for a few ms more at load.
    skops_io.dump(_without_vocabulary(parts), folder / SKOPS_FILE,
                  compression=zipfile.ZIP_DEFLATED, compresslevel=1)


def parts_load(*, folder: Path, names: tuple[str, ...]) -> dict[str, Any]:
    """The objects parts_save wrote (which must include `names`), built by skops from trusted
    types only.

    Raises ArtifactRefusedError for a format-1 pickle, a file that is not a skops file, or one
    that names any type outside skops's defaults and TRUSTED_TYPES; nothing in it is run."""
    skops_io = _skops_io()
    from skops.io.exceptions import UntrustedTypesFoundException

    path = folder / SKOPS_FILE
    if not path.is_file():
        if (folder / PICKLE_FILE).is_file():
            raise ArtifactRefusedError(
                f"The model in {folder} was saved by an older MedLitBot as a pickle "
                f"({PICKLE_FILE}, artifact format 1). Pickles are not loaded: anyone who can "
                f"write to the artifact folder could run code on this machine through one. "
                f"{_CONVERT_HINT}")
        raise FileNotFoundError(f"No {SKOPS_FILE} in {folder}: the model's files are incomplete; "
                                f"retrain it.")
    try:
        parts = skops_io.load(path, trusted=list(TRUSTED_TYPES))
    except UntrustedTypesFoundException:
        # Listed again (a scan builds nothing) for a message that names only what was refused.
        refused = sorted(set(skops_io.get_untrusted_types(file=path)) - set(TRUSTED_TYPES))
        raise ArtifactRefusedError(
            f"Refused to load {path}: it names types MedLitBot does not trust "
            f"({', '.join(refused)}). MedLitBot's models hold none, so the file was "
            f"altered or did not come from this MedLitBot; nothing in it was run. Retrain the "
            f"model.") from None
    except (zipfile.BadZipFile, KeyError, ValueError, TypeError, OSError) as exc:
        raise ArtifactRefusedError(
            f"Refused to load {path}: it is not a readable skops file ({type(exc).__name__}: "
            f"{exc}). It was damaged or replaced; nothing in it was run. Retrain the "
            f"model.") from None
    if not isinstance(parts, dict) or not set(names) <= set(parts):
        raise ArtifactRefusedError(f"Refused to load {path}: it does not hold this model's "
                                   f"parts ({', '.join(names)}). Retrain the model.")
    return _with_vocabulary(parts)


def pickled_folders(*, folder: Path) -> list[Path]:
    """Every artifact folder at or under `folder` (an ensemble holds its members) whose
    scikit-learn parts are still a format-1 pickle."""
    found = [p.parent for p in folder.rglob(PICKLE_FILE) if (p.parent / MANIFEST).is_file()]
    return sorted(p for p in found if not (p / SKOPS_FILE).is_file())


def pickled_parts_convert(*, folder: Path) -> None:
    """Rewrite one format-1 artifact folder in format 2, in place and atomically.

    This unpickles model.joblib, so it runs whatever code the file holds: only for an
    administrator who vouches for the file (the command asks them to say so). The serving
    code never calls it."""
    import joblib

    parts = joblib.load(folder / PICKLE_FILE)  # deliberate: the administrator vouched for it
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    manifest.pop("format_version", None)  # atomic_save writes the current one
    manifest["converted_from"] = f"{PICKLE_FILE} (artifact format 1)"

    def write(tmp: Path) -> None:
        for entry in folder.iterdir():
            if entry.name in (MANIFEST, PICKLE_FILE):
                continue
            if entry.is_dir():
                shutil.copytree(entry, tmp / entry.name)
            else:
                shutil.copy2(entry, tmp / entry.name)
        parts_save(folder=tmp, parts=parts)

    atomic_save(str(folder), write, manifest)
