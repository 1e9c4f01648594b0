"""Artifact folders, written beside the target then swapped in: readers never see half a model."""

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
FORMAT_VERSION = 1
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


def read_manifest(path: str) -> dict[str, Any]:
    manifest_path = Path(path) / MANIFEST
    if not manifest_path.is_file():
        raise FileNotFoundError(f"No {MANIFEST} in {path}: not a MedLitBot model artifact")
    return json.loads(manifest_path.read_text(encoding="utf-8"))
