"""What every classifier shares: the label space, thresholds, evaluation and prediction format."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from .calibration import Calibration, calibration_report, fit_calibration
from .decisions import recall_thresholds, single_label_choice, tune_class_offsets
from .device import DevicePlan
from .metrics import apply_thresholds, compute_metrics, encode_labels, tune_thresholds
from .types import TextData, TrainConfig, check_texts

# Which per-label thresholds predict applies: the F1-tuned ones, or those set for a recall target.
THRESHOLD_F1, THRESHOLD_RECALL = "f1", "recall"
THRESHOLD_CHOICES = (THRESHOLD_F1, THRESHOLD_RECALL)


class BaseClassifier(ABC):
    model_type: str = ""

    def __init__(self, model_type: str, device_plan: DevicePlan | None = None) -> None:
        self.model_type = model_type
        self.device_plan = device_plan
        self.label_names: list[str] = []
        self.multi_label = False
        # Multi-label only: trained with rows that carry no label, so it may predict none.
        self.allows_no_label = False
        self.thresholds: list[float] = []
        # Single-label only: added to log-probabilities before argmax (decisions.py).
        self.class_offsets: list[float] = []
        # Fitted on validation by _tune; identity until then and for models saved before it.
        self.calibration = Calibration()
        # Per label, the highest threshold reaching the recall target on validation (and that
        # recall, precision and positives there): decisions.recall_threshold. [] before format 3.
        self.recall_thresholds: list[dict[str, Any]] = []
        self.recall_target: float | None = None
        self.metrics: dict[str, Any] = {}
        self.config: TrainConfig | None = None
        self.timings: dict[str, float] = {}
        # The int8 fast path's verdict and decision rules (fast_inference.py); {} where none.
        self.fast_path: dict[str, Any] = {}

    @abstractmethod
    def predict_proba_raw(self, texts: list[str]) -> np.ndarray:
        """(n, L) probabilities as the model gives them, before calibration; input order."""

    def predict_proba(self, texts: list[str]) -> np.ndarray:
        """(n, L) calibrated probabilities, rows in input order: what every caller sees."""
        return self.calibration.apply(self.predict_proba_raw(texts))

    @property
    def calibrated(self) -> bool:
        """Whether the probabilities were calibrated on validation (False for a model saved
        before calibration, or trained with calibration "none")."""
        return self.calibration.fitted

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
        # A multi-label row without a label is an example of none of these: all-zero targets.
        self.allows_no_label = self.multi_label and any(not row for row in train.labels)
        keep = [i for i, row in enumerate(train.labels)
                if set(row) & known or (self.allows_no_label and not row)]
        if not keep:
            raise ValueError("No labelled training rows")
        return train.subset(keep) if len(keep) < len(train) else train

    def scorable(self, data: TextData) -> TextData:
        """The rows a metric counts: all of a multi-label model's (one without a label is right
        when nothing is predicted), a single-label model's rows that have their class."""
        if self.multi_label:
            return data
        rows = [i for i, row in enumerate(data.labels) if row]
        return data.subset(rows) if len(rows) < len(data) else data

    def _targets(self, data: TextData) -> np.ndarray:
        """Indicator matrix for multi-label, class indices for single-label."""
        y = encode_labels(data.labels, self.label_names)
        return y if self.multi_label else y.argmax(axis=1)

    def _tune(self, val: TextData, raw: np.ndarray | None = None) -> np.ndarray:
        """Calibration, then thresholds (multi-label) or per-class offsets (single-label) and
        the recall thresholds, all from validation; returns its calibrated probabilities.

        `raw`: validation probabilities before calibration. The decision rules are tuned on
        the calibrated ones, since those are what predict will threshold.
        """
        self.thresholds = [0.5] * len(self.label_names)
        self.class_offsets, self.recall_thresholds = [], []
        self.calibration = Calibration(multi_label=self.multi_label)
        if not len(val):
            return np.zeros((0, len(self.label_names)))
        raw = self.predict_proba_raw(val.texts) if raw is None else raw
        truth = encode_labels(val.labels, self.label_names)
        config = self.config or TrainConfig()
        self.calibration = fit_calibration(prob=raw, truth=truth, multi_label=self.multi_label,
                                           method=config.calibration)
        prob = self.calibration.apply(raw)
        self.thresholds, self.class_offsets = self._decision_rules(val, prob)
        if self.multi_label and not self.calibration.is_identity:
            self.thresholds = self._thresholds_through_calibration(truth, raw, self.thresholds)
        self.recall_target = float(config.recall_target)
        self.recall_thresholds = recall_thresholds(truth, prob, self.recall_target)
        return prob

    def rules_out_of_fold(self, *, data: TextData, raw: np.ndarray, val: TextData,
                          val_raw: np.ndarray | None = None) -> None:
        """Calibration and decision rules refitted on out-of-fold probabilities `raw` of `data`
        (each row scored by a model that never saw it: a search's cross-validation folds over
        train and validation), and the validation metrics recomputed with them (from
        `val_raw`, validation's raw probabilities, where the caller has them).

        A search has these for every cross-validated trial: 1,800 rows instead of a
        200-row validation split. On the 5-class corpus the class offsets that 200 validation
        rows had found real were not on 1,800, and accuracy on 888 held-out rows went from
        0.592 to 0.604; on the demo data's test rows it lifted tfidf_logreg from 0.904 to
        0.916 on one split, but not on average over three (docs/figures/search_out_of_fold.md).
        """
        self._tune(data, raw)
        if self.calibration.selection:
            self.calibration.selection["cross_fitted"] = True  # the page words its rows so
        if len(val):
            measured = (self.evaluate(val) if val_raw is None else self._metrics_from_prob(
                val, self.calibration.apply(val_raw), raw=val_raw))
            self.metrics = {**self.metrics, **measured, "decision_rules_rows": len(data)}

    def _thresholds_through_calibration(self, truth: np.ndarray, raw: np.ndarray,
                                        calibrated: list[float]) -> list[float]:
        """Per-label thresholds tuned on the raw probabilities, carried through the calibration.

        Temperature and Platt maps are strictly increasing, so a label is given exactly where
        the uncalibrated model's tuned threshold gave it: calibration changes what a probability
        says, never a decision. Tuned on the calibrated scale instead, Platt's maps moved which
        grid thresholds won and cost tfidf_logreg 0.004-0.005 test micro-F1 on two of three
        demo splits. An isotonic label keeps its `calibrated` threshold: its flat steps tie
        articles the raw threshold told apart, so no raw threshold carries over.
        """
        mapped = self.calibration.apply(
            np.asarray([tune_thresholds(truth, raw)], dtype=np.float64))[0]
        isotonic = self.calibration.isotonic
        return [calibrated[j] if j < len(isotonic) and isotonic[j] else float(t)
                for j, t in enumerate(mapped)]

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
        """The metrics on `data`'s scorable rows, with how many rows those are of all."""
        total, data = len(data), self.scorable(data)
        counted = {"rows_scored": len(data), "rows_total": total}
        if not len(data):
            return self._metrics_from_prob(data, np.zeros((0, len(self.label_names)))) | counted
        raw = self.predict_proba_raw(data.texts)
        return self._metrics_from_prob(data, self.calibration.apply(raw), raw=raw) | counted

    def _metrics_from_prob(self, data: TextData, prob: np.ndarray,
                           raw: np.ndarray | None = None) -> dict[str, Any]:
        """The metrics of calibrated probabilities; given the raw ones too, with the ECE before
        and after calibration and each label's two thresholds and what they reach here."""
        metrics = compute_metrics(
            data.labels, prob, self.label_names, self.multi_label, self.thresholds, data.texts,
            self.class_offsets, allow_empty=self.allows_no_label,
        )
        if raw is not None and len(data):
            truth = encode_labels(data.labels, self.label_names)
            report = calibration_report(raw=raw, calibrated=prob, truth=truth,
                                        multi_label=self.multi_label,
                                        method=self.calibration.method,
                                        selection=self.calibration.selection)
            metrics["calibration"] = report
            metrics["ece"], metrics["ece_uncalibrated"] = report["ece_after"], report["ece_before"]
            metrics["brier"] = report["brier_after"]
            metrics["decision_thresholds"] = self._thresholds_report(truth, prob)
        return metrics

    def _thresholds_report(self, truth: np.ndarray, prob: np.ndarray) -> dict[str, Any]:
        """Per label: the F1-tuned threshold (multi-label), the recall one with what it reached
        on validation, and the recall and precision it reaches on these rows."""
        per_label = {}
        for j, name in enumerate(self.label_names):
            fitted = self.recall_thresholds[j] if j < len(self.recall_thresholds) else {}
            t, y = fitted.get("threshold"), truth[:, j].astype(bool)
            flagged = prob[:, j] >= t if t is not None else np.zeros(len(y), dtype=bool)
            per_label[name] = {
                "f1": self.thresholds[j] if self.multi_label and j < len(self.thresholds)
                else None,
                "recall": t,
                "validation_recall": fitted.get("recall"),
                "validation_precision": fitted.get("precision"),
                "validation_positives": fitted.get("positives"),
                "recall_here": float((flagged & y).sum() / y.sum()) if t is not None and y.any()
                else None,
                "precision_here": float((flagged & y).sum() / flagged.sum()) if flagged.any()
                else None,
            }
        return {"recall_target": self.recall_target, "per_label": per_label}

    def predict(self, texts: list[str], *, fast: bool = False,
                threshold: str = THRESHOLD_F1) -> list[dict[str, Any]]:
        """Labels and (calibrated) probabilities per text. fast=True (batches) takes the fast
        path when the model has one that kept its validation quality, with that path's own
        decision rules. threshold="recall" gives every label whose probability reaches its
        recall threshold, and every label the F1 rules give (so at least the likeliest label,
        and a single-label model may give several); it takes the standard path, whose
        probabilities those thresholds were set on.
        """
        check_texts(texts)
        if not texts:
            return []
        if threshold == THRESHOLD_RECALL:
            prob = self.predict_proba(list(texts))
            # A recall threshold is the highest that reached the target on validation; on few
            # validation rows it can sit above the F1 one, and the high-recall mode must never
            # give fewer labels than the default: it gives the F1 labels too.
            chosen = np.maximum(apply_thresholds(prob, self._recall_decision_thresholds(),
                                                 allow_empty=self.allows_no_label),
                                self._choices(prob, self.thresholds, self.class_offsets))
            return self._predictions(prob, chosen)
        if threshold != THRESHOLD_F1:
            raise ValueError(f"threshold is {THRESHOLD_F1} or {THRESHOLD_RECALL}, not "
                             f"{threshold!r}")
        thresholds, offsets = self.thresholds, self.class_offsets
        if fast and self.fast_path_used:
            prob = self.predict_proba_fast(list(texts))
            thresholds = self.fast_path.get("thresholds") or thresholds
            offsets = self.fast_path.get("class_offsets") or []
        else:
            prob = self.predict_proba(list(texts))
        return self._predictions(prob, self._choices(prob, thresholds, offsets))

    def _recall_decision_thresholds(self) -> list[float]:
        """Each label's recall threshold; where validation had no positive, its F1 one."""
        if not self.recall_thresholds:
            raise ValueError("This model was saved before recall thresholds existed: retrain "
                             "it to predict with threshold=recall, or use threshold=f1.")
        defaults = self.thresholds or [0.5] * len(self.label_names)
        return [r["threshold"] if r.get("threshold") is not None else defaults[j]
                for j, r in enumerate(self.recall_thresholds)]

    def _predictions(self, prob: np.ndarray, chosen: np.ndarray) -> list[dict[str, Any]]:
        return [
            {
                "labels": [self.label_names[j] for j in np.nonzero(chosen[i])[0]],
                "probabilities": {
                    name: float(prob[i, j]) for j, name in enumerate(self.label_names)
                },
            }
            for i in range(len(prob))
        ]

    def _choices(self, prob: np.ndarray, thresholds: list[float],
                 offsets: list[float]) -> np.ndarray:
        """(n, L) 0/1 decisions from probabilities under the given decision rules."""
        if self.multi_label:
            return apply_thresholds(prob, thresholds or [0.5] * len(self.label_names),
                                    allow_empty=self.allows_no_label)
        choice = single_label_choice(prob, offsets)
        return np.eye(len(self.label_names), dtype=np.int64)[choice]

    def _manifest(self) -> dict[str, Any]:
        return {
            "model_type": self.model_type,
            "class": f"{type(self).__module__}.{type(self).__qualname__}",
            "label_names": self.label_names,
            "label_map": {name: i for i, name in enumerate(self.label_names)},
            "multi_label": self.multi_label,
            "allows_no_label": self.allows_no_label,
            "thresholds": self.thresholds,
            "class_offsets": self.class_offsets,
            "calibration": self.calibration.as_dict(),
            "recall_target": self.recall_target,
            "recall_thresholds": self.recall_thresholds,
            "metrics": self.metrics,
            "config": self.config.as_dict() if self.config else {},
            "device_plan": self.device_plan.as_dict() if self.device_plan else {},
            "timings": self.timings,
            "fast_path": self.fast_path,
        }

    def _restore(self, manifest: dict[str, Any]) -> None:
        self.label_names = list(manifest["label_names"])
        self.multi_label = bool(manifest["multi_label"])
        self.allows_no_label = bool(manifest.get("allows_no_label"))
        self.thresholds = list(manifest.get("thresholds") or [0.5] * len(self.label_names))
        self.class_offsets = list(manifest.get("class_offsets") or [])
        self.calibration = Calibration.from_dict(manifest.get("calibration"))
        self.recall_target = manifest.get("recall_target")
        self.recall_thresholds = list(manifest.get("recall_thresholds") or [])
        self.metrics = manifest.get("metrics", {})
        # Not strict: a manifest may predate the settings' bounds, and the model must load.
        self.config = TrainConfig.from_dict(manifest.get("config", {}), strict=False)
        self.timings = manifest.get("timings", {})
        self.fast_path = manifest.get("fast_path") or {}
        # Kept for the record only: the loading machine plans its own device.
        self.trained_device_plan = manifest.get("device_plan", {})
