"""An ensemble: trained member models whose probabilities are averaged with tuned weights.

Weights are chosen on the validation split to maximise macro-F1 (after each candidate's own
thresholds or offsets are tuned, as the finished model will use them), then the ensemble's
thresholds are tuned like any model's. A search tunes both on its members' out-of-fold
probabilities over every row of its folds instead, where it has them, and judges whether that
beats its winner out of fold (ensemble_score.py: scored on the rows it was tuned on, an
ensemble would win by noise). The members are embedded in the artifact, each saved by its own
class under members/<i>/, so deleting or retraining a member model never changes an ensemble,
and the manifest is written last: a reader never sees half an ensemble.

One text per row reaches every member, so an ensemble reads metadata in one form: its members'
when they agree (metadata_rows.ensemble_reading). Given validation rows with their metadata
(metadata_rows.RowsWithMetadata, as the job hands them), it composes them in that form before
the members score them, and records the form in its config, so prediction composes new rows the
same way: the weights are tuned on what the members will read in use.
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from pathlib import Path
from typing import Any

import numpy as np

from .artifacts import atomic_save
from .base import BaseClassifier
from .decisions import single_label_choice, tune_class_offsets
from .metadata_rows import EvaluatesWithMetadata, RowsWithMetadata, composed, ensemble_reading
from .metrics import apply_thresholds, encode_labels, macro_f1, tune_thresholds
from .types import ProgressCallback, ShouldStop, TextData, TrainConfig, TrainingStopped

MEMBERS_DIR = "members"
# A simplex grid this fine is exhaustive up to four members (286 weightings for four);
# beyond that, coordinate ascent over the same steps.
WEIGHT_STEP = 0.1
EXHAUSTIVE_MAX_MEMBERS = 4


@dataclasses.dataclass(frozen=True)
class TunedOn:
    """The rows an ensemble was tuned on (validation's, or a search's folds'), as its members
    scored them: kept in memory (never saved) so a search can judge it out of fold without
    scoring them again (ensemble_score)."""

    texts: list[str]
    truth: np.ndarray
    probs: list[np.ndarray]

    def rows(self, label_names: list[str]) -> TextData:
        """The rows with their labels, as a model's rules are tuned on them."""
        return TextData(list(self.texts), [[label_names[j] for j in np.flatnonzero(row)]
                                           for row in self.truth])


def _decide(prob: np.ndarray, truth: np.ndarray, multi_label: bool) -> np.ndarray:
    """Indicator predictions as the finished model would make them: with this weighting's own
    per-label thresholds (multi-label) or per-class offsets (single-label), as _tune sets them.
    Scoring plain argmax here instead could let a member whose offsets help beat the ensemble."""
    if multi_label:
        return apply_thresholds(prob, tune_thresholds(truth, prob))
    offsets = tune_class_offsets(truth.argmax(axis=1), prob)
    return np.eye(prob.shape[1], dtype=np.int64)[single_label_choice(prob, offsets)]


def _weightings(n: int) -> list[np.ndarray]:
    steps = round(1 / WEIGHT_STEP)
    return [np.array(c, dtype=np.float64) / steps
            for c in itertools.product(range(steps + 1), repeat=n) if sum(c) == steps]


def tune_weights(probs: list[np.ndarray], truth: np.ndarray, multi_label: bool) -> np.ndarray:
    """Non-negative weights summing to 1 that maximise validation macro-F1.

    Ties go to the most even weighting: averaging is the safer bet on unseen data.
    """
    n = len(probs)
    stacked = np.stack(probs)  # members x rows x labels

    def score(w: np.ndarray) -> tuple[float, float]:
        prob = np.tensordot(w, stacked, axes=1)
        return macro_f1(truth, _decide(prob, truth, multi_label)), -float(np.abs(w - 1 / n).sum())

    if n <= EXHAUSTIVE_MAX_MEMBERS:
        return max(_weightings(n), key=score)
    weights = np.full(n, 1 / n)
    best = score(weights)
    for _ in range(3):
        for i in range(n):
            for value in np.arange(0, 1 + 1e-9, WEIGHT_STEP):
                trial = weights.copy()
                trial[i] = value
                if trial.sum() == 0:
                    continue
                trial /= trial.sum()
                if (found := score(trial)) > best:
                    best, weights = found, trial
    return weights


def _members_check(members: list[BaseClassifier]) -> None:
    """ValueError unless the members can be averaged: two or more, no ensemble among them,
    one label space."""
    if len(members) < 2:
        raise ValueError("An ensemble needs at least two member models.")
    if any(isinstance(m, EnsembleClassifier) for m in members):
        raise ValueError("An ensemble cannot contain another ensemble; add its members.")
    first = members[0]
    for member in members[1:]:
        # Probabilities are summed column by column: the columns must mean the same labels.
        if list(member.label_names) != list(first.label_names) or (
                member.multi_label != first.multi_label):
            raise ValueError(
                f"Members must share one label space (the same labels in the same order, "
                f"and both single- or multi-label): {member.model_type} has "
                f"{member.label_names}, {first.model_type} has {first.label_names}.")


class EnsembleClassifier(EvaluatesWithMetadata, BaseClassifier):
    def __init__(self, model_type: str = "ensemble", device_plan: Any = None) -> None:
        super().__init__(model_type, device_plan)
        self.members: list[BaseClassifier] = []
        self.weights: list[float] = []
        self.tuned_on: TunedOn | None = None

    @classmethod
    def from_members(
        cls, members: list[BaseClassifier], *, val: TextData, config: TrainConfig,
        progress_cb: ProgressCallback | None = None, should_stop: ShouldStop | None = None,
        out_of_fold: TunedOn | None = None,
    ) -> EnsembleClassifier:
        """An ensemble of fitted members sharing one label space, tuned on `val`, or on
        `out_of_fold` where a search has it: each member's out-of-fold probabilities on the
        rows of its cross-validation folds, ten times validation's rows (ensemble_score).
        Either way its metrics are on `val`."""
        progress = progress_cb or (lambda event: None)
        _members_check(members)
        first = members[0]
        started = time.perf_counter()
        clf = cls()
        clf.config, clf.members = config, list(members)
        if isinstance(val, RowsWithMetadata):
            fields, style, why = ensemble_reading(members)
            clf.config = dataclasses.replace(config, metadata_used=fields, metadata_style=style)
            val = composed(val, fields=fields, style=style)
            progress({"phase": "evaluating", "message": f"metadata: {why}"})
        clf.label_names, clf.multi_label = list(first.label_names), first.multi_label
        clf.allows_no_label = any(getattr(m, "allows_no_label", False) for m in members)
        if not len(val := clf.scorable(val)):
            raise ValueError("An ensemble is tuned on the validation split, which has no "
                             "labelled rows.")
        member_scores = []
        probs = []
        for i, member in enumerate(members):
            if should_stop is not None and should_stop():
                raise TrainingStopped(None, "Stopped while scoring the members")
            progress({"phase": "evaluating", "message": f"Scoring member {i + 1} of "
                      f"{len(members)} ({member.model_type}) on validation"})
            prob = member.predict_proba(val.texts)
            probs.append(prob)
            member_scores.append(float(member._metrics_from_prob(val, prob)["macro_f1"]))
        truth = encode_labels(val.labels, clf.label_names)
        tuning = out_of_fold or TunedOn(texts=list(val.texts), truth=truth, probs=probs)
        progress({"phase": "training", "step": 0, "total_steps": 1, "epoch": 0.0,
                  "total_epochs": 1, "message": "Tuning the members' weights"})
        weighing = time.perf_counter()
        clf.weights = [float(w) for w in tune_weights(tuning.probs, tuning.truth,
                                                      clf.multi_label)]
        clf.timings["weights_seconds"] = time.perf_counter() - weighing
        clf.tuned_on = tuning
        # The members' calibrated probabilities, averaged, are calibrated once more as a whole.
        clf._tune(tuning.rows(clf.label_names), clf._combine(tuning.probs))
        raw = clf._combine(probs)
        clf.metrics = clf._metrics_from_prob(val, clf.calibration.apply(raw), raw=raw)
        if out_of_fold is not None:
            clf.metrics["decision_rules_rows"] = len(out_of_fold.truth)
            if clf.calibration.selection:  # the model page words its rows so
                clf.calibration.selection["cross_fitted"] = True
        clf.metrics["members"] = [
            {"model_type": m.model_type, "weight": w, "validation_macro_f1": s}
            for m, w, s in zip(members, clf.weights, member_scores, strict=True)
        ]
        clf.timings["fit_seconds"] = time.perf_counter() - started
        progress({"phase": "training", "step": 1, "total_steps": 1, "epoch": 1.0,
                  "total_epochs": 1})
        return clf

    def fit(self, train: TextData, val: TextData, config: TrainConfig,
            progress_cb: ProgressCallback, should_stop: ShouldStop) -> dict[str, Any]:
        """As a training job: load the member artifacts the job names, then tune on val."""
        from classification.ml_models import load_classifier

        if not config.member_paths:
            raise ValueError("An ensemble job names its member models' artifacts.")
        progress_cb({"phase": "loading_model", "message":
                     f"Loading {len(config.member_paths)} member models"})
        members = [load_classifier(path) for path in config.member_paths]
        built = self.from_members(members, val=val, config=config, progress_cb=progress_cb,
                                  should_stop=should_stop)
        # Become the tuned ensemble, keeping the device plan the job made (the job records it).
        plan, model_type = self.device_plan, self.model_type
        self.__dict__.update(built.__dict__)
        self.device_plan, self.model_type = plan, model_type
        return self.metrics

    def _combine(self, probs: list[np.ndarray]) -> np.ndarray:
        return np.tensordot(np.asarray(self.weights), np.stack(probs), axes=1)

    def predict_proba_raw(self, texts: list[str]) -> np.ndarray:
        if not self.members:
            raise RuntimeError("Ensemble has no members")
        return self._combine([m.predict_proba(texts) for m in self.members])

    def save(self, path: str) -> None:
        def write(tmp: Path) -> None:
            for i, member in enumerate(self.members):
                member.save(str(tmp / MEMBERS_DIR / str(i)))

        manifest = self._manifest()
        manifest["weights"] = self.weights
        manifest["members"] = [m.model_type for m in self.members]
        atomic_save(path, write, manifest)

    @classmethod
    def load(cls, path: str, manifest: dict[str, Any]) -> EnsembleClassifier:
        from classification.ml_models import load_classifier

        clf = cls(manifest["model_type"])
        clf._restore(manifest)
        clf.weights = [float(w) for w in manifest["weights"]]
        clf.members = [load_classifier(str(Path(path) / MEMBERS_DIR / str(i)))
                       for i in range(len(manifest["members"]))]
        return clf
