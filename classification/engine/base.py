"""What every classifier shares: the label space, thresholds, evaluation and prediction format."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from .decisions import single_label_choice, tune_class_offsets
from .device import DevicePlan
from .metrics import apply_thresholds, compute_metrics, encode_labels, tune_thresholds
from .types import TextData, TrainConfig, check_texts


class BaseClassifier(ABC):
    model_type: str = ""

    def __init__(self, model_type: str, device_plan: DevicePlan | None = None) -> None:
        self.model_type = model_type
        self.device_plan = device_plan
        self.label_names: list[str] = []
        self.multi_label = False
        self.thresholds: list[float] = []
        # Single-label only: added to log-probabilities before argmax (decisions.py).
        self.class_offsets: list[float] = []
        self.metrics: dict[str, Any] = {}
        self.config: TrainConfig | None = None
        self.timings: dict[str, float] = {}
        # The int8 fast path's verdict and decision rules (fast_inference.py); {} where none.
        self.fast_path: dict[str, Any] = {}

    @abstractmethod
    def predict_proba(self, texts: list[str]) -> np.ndarray:
        """(n, L) probabilities, rows in input order."""

    @classmethod
    @abstractmethod
    def load(cls, path: str, manifest: dict[str, Any]) -> BaseClassifier:
        """The classifier save() wrote to path; load_classifier finds the class in the registry."""

    def _setup_labels(self, train: TextData, val: TextData, config: TrainConfig) -> TextData:
        """Fix the label space and task shape; returns train without rows it cannot learn from."""
        self.config = config
        self.label_names = list(config.label_names) or sorted(
            set(train.label_space()) | set(val.label_space())
        )
        if len(self.label_names) < 2:
            raise ValueError(
                f"Need at least two labels to train a classifier, got {self.label_names}"
            )
        # A dataset with any multi-label row is multi-label, whatever the form said.
        self.multi_label = bool(config.multi_label) or any(len(row) > 1 for row in train.labels)
        known = set(self.label_names)
        keep = [i for i, row in enumerate(train.labels) if row and set(row) & known]
        if not keep:
            raise ValueError("No labelled training rows")
        return train.subset(keep) if len(keep) < len(train) else train

    def _targets(self, data: TextData) -> np.ndarray:
        """Indicator matrix for multi-label, class indices for single-label."""
        y = encode_labels(data.labels, self.label_names)
        return y if self.multi_label else y.argmax(axis=1)

    def _tune(self, val: TextData, val_prob: np.ndarray | None = None) -> None:
        """Thresholds (multi-label) or per-class offsets (single-label) from validation."""
        self.thresholds = [0.5] * len(self.label_names)
        self.class_offsets = []
        if not len(val):
            return
        prob = self.predict_proba(val.texts) if val_prob is None else val_prob
        self.thresholds, self.class_offsets = self._decision_rules(val, prob)

    def _decision_rules(self, val: TextData, prob: np.ndarray) -> tuple[list[float], list[float]]:
        """(thresholds, class offsets) tuned on validation probabilities from any path."""
        truth = encode_labels(val.labels, self.label_names)
        if self.multi_label:
            return tune_thresholds(truth, prob), []
        offsets = tune_class_offsets(truth.argmax(axis=1), prob)
        return [0.5] * len(self.label_names), offsets if any(offsets) else []

    @property
    def fast_path_used(self) -> bool:
        """Whether predict(fast=True) takes the fast path (it was built and kept its quality)."""
        return bool(self.fast_path.get("used"))

    def predict_proba_fast(self, texts: list[str]) -> np.ndarray:
        """The fast path's probabilities; only classifiers that build one override this."""
        raise NotImplementedError(f"{self.model_type} has no fast inference path")

    def evaluate(self, data: TextData) -> dict[str, Any]:
        rows = [i for i, row in enumerate(data.labels) if row]
        data = data.subset(rows) if len(rows) < len(data) else data
        prob = self.predict_proba(data.texts) if len(data) else np.zeros((0, len(self.label_names)))
        return self._metrics_from_prob(data, prob)

    def _metrics_from_prob(self, data: TextData, prob: np.ndarray) -> dict[str, Any]:
        return compute_metrics(
            data.labels, prob, self.label_names, self.multi_label, self.thresholds, data.texts,
            self.class_offsets,
        )

    def predict(self, texts: list[str], *, fast: bool = False) -> list[dict[str, Any]]:
        """Labels and probabilities per text. fast=True (batches) takes the fast path when the
        model has one that kept its validation quality, with that path's own decision rules."""
        check_texts(texts)
        if not texts:
            return []
        thresholds, offsets = self.thresholds, self.class_offsets
        if fast and self.fast_path_used:
            prob = self.predict_proba_fast(list(texts))
            thresholds = self.fast_path.get("thresholds") or thresholds
            offsets = self.fast_path.get("class_offsets") or []
        else:
            prob = self.predict_proba(list(texts))
        chosen = self._choices(prob, thresholds, offsets)
        return [
            {
                "labels": [self.label_names[j] for j in np.nonzero(chosen[i])[0]],
                "probabilities": {
                    name: float(prob[i, j]) for j, name in enumerate(self.label_names)
                },
            }
            for i in range(len(texts))
        ]

    def _choices(self, prob: np.ndarray, thresholds: list[float],
                 offsets: list[float]) -> np.ndarray:
        """(n, L) 0/1 decisions from probabilities under the given decision rules."""
        if self.multi_label:
            return apply_thresholds(prob, thresholds or [0.5] * len(self.label_names))
        choice = single_label_choice(prob, offsets)
        return np.eye(len(self.label_names), dtype=np.int64)[choice]

    def _manifest(self) -> dict[str, Any]:
        return {
            "model_type": self.model_type,
            "class": f"{type(self).__module__}.{type(self).__qualname__}",
            "label_names": self.label_names,
            "label_map": {name: i for i, name in enumerate(self.label_names)},
            "multi_label": self.multi_label,
            "thresholds": self.thresholds,
            "class_offsets": self.class_offsets,
            "metrics": self.metrics,
            "config": self.config.as_dict() if self.config else {},
            "device_plan": self.device_plan.as_dict() if self.device_plan else {},
            "timings": self.timings,
            "fast_path": self.fast_path,
        }

    def _restore(self, manifest: dict[str, Any]) -> None:
        self.label_names = list(manifest["label_names"])
        self.multi_label = bool(manifest["multi_label"])
        self.thresholds = list(manifest.get("thresholds") or [0.5] * len(self.label_names))
        self.class_offsets = list(manifest.get("class_offsets") or [])
        self.metrics = manifest.get("metrics", {})
        # Not strict: a manifest may predate the settings' bounds, and the model must load.
        self.config = TrainConfig.from_dict(manifest.get("config", {}), strict=False)
        self.timings = manifest.get("timings", {})
        self.fast_path = manifest.get("fast_path") or {}
        # Kept for the record only: the loading machine plans its own device.
        self.trained_device_plan = manifest.get("device_plan", {})
