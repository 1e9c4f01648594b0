"""Which rows a search trial's score is on, and what a trial costs given that.

A TF-IDF or embedding trial is scored by cross-validation on train and validation, except the
search's first trial when its folds do not fit the time left: that one is one fit scored on the
validation split, like a transformer's. Such a score is not on the same rows as the
cross-validated ones (issue 39: a validation-only 0.628 beat cross-validated 0.560 and 0.599).
So when time allows, the search re-scores it by cross-validation as a new trial at the same
settings, which keeps its already fitted model and supersedes it; when time does not, the
winner is chosen on the validation split, which every kept trial has a score on
(search_scoring.choose).

LikeWithLike is a part of engine/search.py's SearchRun, kept apart for size; it reads the run's
study, folds and kept models.
"""

from __future__ import annotations

import functools
from typing import Any

from . import model_size, search_estimates, search_scoring, search_space, time_estimate
from .base import BaseClassifier
from .registry import REGISTRY, ModelSpec


class LikeWithLike:
    """The basis-aware half of SearchRun's bookkeeping (attributes are SearchRun's)."""

    best: dict[str, tuple[float, int, BaseClassifier]]
    defaults: dict[str, tuple[float, int, BaseClassifier]]
    folds: list[tuple[list[int], list[int]]]
    config: Any  # the search's TrainConfig
    rescoring: int | None = None  # the validation-only trial the running trial re-scores

    # ---- what each trial's score is on -------------------------------------------------------

    def _validation_only(self, trial: Any) -> bool:
        """A TF-IDF or embedding trial scored by one fit on validation although the search
        cross-validates: its folds did not fit the time left."""
        spec = REGISTRY.get(str(trial.params.get("model_type")))
        return (trial.value is not None and bool(self.folds) and spec is not None
                and spec.kind in search_space.HEAD_KINDS and not trial.user_attrs.get(
                    "fold_scores"))

    def _rescored(self, *, finished_only: bool = True) -> dict[int, int]:
        """{validation-only trial: the trial that re-scored it by cross-validation}."""
        return {int(t.user_attrs["rescores"]): t.number for t in self._trials()
                if t.user_attrs.get("rescores") is not None
                and (t.value is not None or not finished_only)}

    def _kept_model(self, number: int) -> BaseClassifier | None:
        for _, kept, clf in [*self.best.values(), *self.defaults.values()]:
            if kept == number:
                return clf
        return None

    def _scored(self, number: int) -> search_scoring.Scored:
        trial = self._trials()[number]
        folds = tuple(trial.user_attrs.get("fold_scores") or ())
        validation = trial.user_attrs.get("validation_score")
        if validation is None and folds and (clf := self._kept_model(number)) is not None:
            # A study from before validation scores were recorded: its kept model's own.
            validation = (clf.metrics or {}).get("macro_f1")
        return search_scoring.Scored(
            number=number, model_type=str(trial.params.get("model_type")),
            value=float(trial.value or 0.0), fold_scores=folds,
            validation=None if validation is None else float(validation))

    def _beats(self, new: int, old: int) -> bool:
        """Whether trial `new` scores above trial `old` on the rows both were scored on; a
        re-score by cross-validation always replaces the trial it re-scores."""
        if self._trials()[new].user_attrs.get("rescores") == old:
            return True
        pair = [self._scored(new), self._scored(old)]
        basis = search_scoring.common_basis(pair)
        return pair[0].on(basis) > pair[1].on(basis)

    def _pending_rescore(self) -> tuple[ModelSpec, dict[str, Any]] | None:
        """A kept validation-only trial to re-score by cross-validation, with its settings, when
        its folds fit the time left (one attempt per trial); sets self.rescoring."""
        tried = self._rescored(finished_only=False)
        for _, number, _ in [*self.defaults.values(), *self.best.values()]:
            trial = self._trials()[number]
            if number in tried or not self._validation_only(trial):
                continue
            spec = REGISTRY[str(trial.params["model_type"])]
            # The folds refit what the trial's one fit did (less its embedding, now cached).
            one_fit = float(trial.user_attrs.get("seconds") or 0.0) - float(
                trial.user_attrs.get("embed_seconds") or 0.0)
            if max(0.0, one_fit) * len(self.folds) <= self.available():
                self.rescoring = number
                return spec, search_space.unprefixed(trial.params)
        return None

    # ---- what a trial costs ------------------------------------------------------------------

    def _trials_of(self, key: str) -> int:
        return sum(1 for t in self._trials() if t.params.get("model_type") == key)

    def _work_ratio(self, spec: ModelSpec) -> float:
        """The search's model_path folder's size against the one spec's speed was measured on
        (only the kinds that train that folder have one)."""
        if spec.weights != "model_path" or spec.speed.measured_on is None:
            return 1.0
        return model_size.work_ratio(model_path=self.config.model_path,
                                     reference=spec.speed.measured_on)

    def _first_estimate(self, spec: ModelSpec) -> float:
        return self._estimate(spec, search_space.defaults(spec))

    def _fits(self, spec: ModelSpec) -> int:
        """Passes over the rows a trial costs: a TF-IDF trial's folds and kept model each
        featurise them; an embedding trial encodes them once (its folds refit the head)."""
        return len(self.folds) + 1 if spec.kind == "baseline" and self.folds else 1

    def _measured_fits(self, spec: ModelSpec) -> int:
        """The fits the kind's latest measured trial made: one when validation-only, the folds
        alone when it re-scored one (it kept that trial's model), else a trial's usual."""
        measured = [t for t in self._trials() if t.params.get("model_type") == spec.key
                    and t.user_attrs.get("seconds") and t.value is not None]
        if not measured or spec.kind != "baseline":
            return self._fits(spec)
        if self._validation_only(measured[-1]):
            return 1
        return len(self.folds) if measured[-1].user_attrs.get("rescores") is not None else (
            self._fits(spec))

    @functools.cached_property
    def _estimate_rows(self) -> search_estimates.TrialRows:
        """The splits' sizes and length, and the install's measured rates, which the job
        leaves in its folder (time_estimate.rates_write): the page's estimate's inputs."""
        return search_estimates.TrialRows(
            train=len(self.train), validation=len(self.val),
            p95_words=time_estimate.p95_words_of([*self.train.texts, *self.val.texts]),
            rates=time_estimate.rates_read(folder=self.config.output_dir))

    def _estimate(self, spec: ModelSpec, settings: dict[str, Any] | None = None) -> float:
        rows, plan = self._estimate_rows, self.search.device_plan
        slowdown = search_estimates.slowdown(spec=spec, trials=self._trials(), device_plan=plan,
                                             rows=rows, fits_of=self._fits,
                                             work_ratio_of=self._work_ratio)
        seconds = search_estimates.trial_seconds(
            spec=spec, settings=settings or search_space.defaults(spec), trials=self._trials(),
            device_plan=plan, rows=rows, fits=self._fits(spec), slowdown=slowdown,
            cache=self.shared_cache, texts=self.embed_texts, work_ratio=self._work_ratio(spec))
        # A measured trial that made fewer fits than the next one will (a validation-only
        # first trial, then cross-validated ones): scaled up, so the budget is kept.
        return seconds * self._fits(spec) / self._measured_fits(spec)
