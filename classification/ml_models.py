"""MedLitBot's classifier engine, the public facade (see docs/contracts.md).

Importing this module must stay cheap: Django imports it for REGISTRY, so torch, transformers
and scikit-learn are imported only inside the functions that need them.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from classification.engine.fast_inference import fast_path_summary
from classification.engine.registry import (
    MODEL_DIR_ENV,
    REGISTRY,
    ModelSpec,
    get_spec,
    how_to_get,
    model_availability,
)
from classification.engine.schema import (
    ALIASES,
    SETTINGS,
    TrainConfigError,
    training_config_clean,
    user_settings,
)
from classification.engine.types import (
    Classifier,
    ModelUnavailableError,
    ProgressCallback,
    ShouldStop,
    TextData,
    TrainConfig,
    TrainingStopped,
)

if TYPE_CHECKING:
    from classification.engine.base import BaseClassifier
    from classification.engine.baselines import EmbeddingLogRegClassifier, SklearnClassifier
    from classification.engine.device import DevicePlan
    from classification.engine.transformer import TransformerClassifier

__all__ = [
    "ALIASES",
    "MODEL_DIR_ENV",
    "REGISTRY",
    "SETTINGS",
    "BaseClassifier",
    "Classifier",
    "DevicePlan",
    "EmbeddingLogRegClassifier",
    "ModelSpec",
    "ModelUnavailableError",
    "ProgressCallback",
    "ShouldStop",
    "SklearnClassifier",
    "TextData",
    "TrainConfig",
    "TrainConfigError",
    "TrainingStopped",
    "TransformerClassifier",
    "clear_classifier_cache",
    "create_classifier",
    "fast_path_summary",
    "get_cached_classifier",
    "get_spec",
    "how_to_get",
    "load_classifier",
    "model_availability",
    "plan_device",
    "training_config_clean",
    "user_settings",
]

CACHE_SIZE = int(os.environ.get("MEDLITBOT_MODEL_CACHE_SIZE", "4"))


# Classes resolved on first access (PEP 562), so `from classification.ml_models import
# TransformerClassifier` works while a plain `import classification.ml_models` stays light.
# The engine modules import torch, transformers and sklearn only inside their functions.
_LAZY = {
    "DevicePlan": "classification.engine.device",
    "BaseClassifier": "classification.engine.base",
    "TransformerClassifier": "classification.engine.transformer",
    "SklearnClassifier": "classification.engine.baselines",
    "EmbeddingLogRegClassifier": "classification.engine.baselines",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


def plan_device(*, use_mps: bool = False) -> DevicePlan:
    from classification.engine.device import plan_device as _plan

    return _plan(use_mps=use_mps)


def create_classifier(model_type: str, *, device_plan: DevicePlan | None = None) -> Classifier:
    return get_spec(model_type).classifier_class()(model_type, device_plan)


def load_classifier(path: str) -> Classifier:
    """Load an artifact folder written by Classifier.save (reads its manifest.json)."""
    from classification.engine.artifacts import read_manifest

    manifest = read_manifest(path)
    return get_spec(manifest["model_type"]).classifier_class().load(path, manifest)


_cache: OrderedDict[tuple[str, float], Classifier] = OrderedDict()
_cache_lock = threading.Lock()


def get_cached_classifier(path: str) -> Classifier:
    """load_classifier with a per-process LRU keyed by path and manifest mtime.

    A retrained model is saved with os.replace, which gives the manifest a new mtime, so a
    stale entry is never served.
    """
    resolved = str(Path(path).resolve())
    key = (resolved, os.stat(Path(resolved) / "manifest.json").st_mtime)
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    classifier = load_classifier(resolved)
    with _cache_lock:
        for old in [k for k in _cache if k[0] == resolved]:
            del _cache[old]
        _cache[key] = classifier
        while len(_cache) > max(1, CACHE_SIZE):
            _cache.popitem(last=False)
    return classifier


def clear_classifier_cache() -> None:
    with _cache_lock:
        _cache.clear()
_LAZY["explain"] = "classification.engine.explain"  # explanations: engine/explain.py
