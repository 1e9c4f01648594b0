"""Finding the best model for a dataset within a time budget: candidates tuned with Optuna.

One Optuna study per search, in the storage the job names (the app's own database), so a
resumed job continues it: its trials, and, in the job's folder, the artifacts of the best and
the default trial of each kind. The budget is wall time: in a job it counts from the attempt's
start less the time earlier attempts ran (TrainConfig.search_clock_start), so Cancel and Resume
hand a search no extra time, and the time the job needs after the search (the test split, the
save, the check that it loads back) is kept aside from the start of every trial.

Optuna's TPE sampler proposes parameters; which candidate gets the next trial is decided here.
First every candidate runs once at its usual settings, cheapest first, so the defaults are always
on the board. Then the candidate with the best score, plus a bonus that shrinks with its number
of trials, gets the next one among those whose estimated time still fits, each up to
search_space.max_trials. A transformer whose open space may not fit the time left gets its
epochs and length fixed to the costliest that does. TF-IDF and embedding trials are scored by
cross-validation on train and validation (search_scoring.py); transformer trials on validation,
after each epoch, and Optuna's median pruner stops those trailing the earlier trials. The
winner and its verdict against the defaults are in search_outcome.py, the ensemble in
search_ensemble.py; which rows each score is on (only like is compared with like) and what a
trial costs, in search_basis.py.

A stop request (Cancel) ends the running trial and keeps the best model found so far
(`stopped_reason` says so); the time budget ends a trial only once some trial has finished, so
a search always returns a model.
"""

from __future__ import annotations

import dataclasses
import logging
import shutil
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from . import metadata_rows, search_scoring, search_space
from .base import BaseClassifier
from .feature_memo import FeatureMemo
from .registry import ModelSpec, get_spec, model_availability
from .search_ensemble import ENSEMBLE
from .search_outcome import SearchOutcome
from .types import ProgressCallback, ShouldStop, TextData, TrainConfig, TrainingStopped

logger = logging.getLogger(__name__)

EXPLORE_BONUS = 0.02  # per 1/sqrt(trials of the candidate): a once-tried kind gets another look
MAX_TRIALS = 300  # one-second TF-IDF trials on a long budget: beyond this TPE gains nothing
FINISH_SECONDS = 3.0  # after the search: the test split, the save and its check, at least
SAVE_EVERY_SECONDS = 10.0  # how often the time used is written to the study during a trial


def available_candidates(model_dir: str | None = None) -> list[str]:
    """Every kind the New model form offers whose weights are on this machine (a search never
    downloads), except custom, which needs a folder named per job."""
    from .registry import REGISTRY

    return [key for key, spec in REGISTRY.items() if spec.offered and key != "custom"
            and model_availability(key, local_dir=model_dir)["status"] in ("bundled", "cached")]


class SearchClassifier(metadata_rows.EvaluatesWithMetadata, BaseClassifier):
    """Fits like any classifier; afterwards it is its winner (predictions, save, metrics)."""

    def __init__(self, model_type: str = "search", device_plan: Any = None) -> None:
        super().__init__(model_type, device_plan)
        self.winner: BaseClassifier | None = None
        self.kept: dict[str, BaseClassifier] = {}
        self.stopped_reason = ""

    def fit(self, train: TextData, val: TextData, config: TrainConfig,
            progress_cb: ProgressCallback, should_stop: ShouldStop) -> dict[str, Any]:
        run = SearchRun(self, train, val, config, progress_cb, should_stop)
        winner, summary = run.run()
        self.winner, self.stopped_reason = winner, run.stopped_reason
        # The best model of each kind, for a benchmark to score beside the winner: a search that
        # does worse with more levers is explained by its kept trials' own held-out scores.
        self.kept = {kind: clf for kind, (_, _, clf) in run.best.items()}
        self.config = config
        for name in ("label_names", "multi_label", "thresholds", "class_offsets",
                     "calibration", "recall_thresholds", "recall_target", "fast_path"):
            if hasattr(winner, name):
                setattr(self, name, getattr(winner, name))
        winner.metrics = {**winner.metrics, "search": summary}
        self.metrics = winner.metrics
        self.timings = {**winner.timings, **run.timings}
        progress_cb({"phase": "training", "message": metadata_rows.reading_line(winner, "winner")})
        return self.metrics

    def predict_proba_raw(self, texts: list[str]) -> np.ndarray:
        if self.winner is None:
            raise RuntimeError("The search has not found a model yet")
        return self.winner.predict_proba_raw(texts)

    def predict_proba(self, texts: list[str]) -> np.ndarray:
        if self.winner is None:
            raise RuntimeError("The search has not found a model yet")
        return self.winner.predict_proba(texts)

    def save(self, path: str) -> None:
        """The winner's own artifact (its class loads it); the search is in its metrics."""
        if self.winner is None:
            raise RuntimeError("The search has not found a model yet")
        self.winner.save(path)

    @classmethod
    def load(cls, path: str, manifest: dict[str, Any]) -> BaseClassifier:
        raise TypeError("A search saves its winner's artifact; load that with load_classifier.")


class SearchRun(SearchOutcome):
    """One attempt of a search: the study, the clock, the best and default model of each kind."""

    def __init__(self, search: SearchClassifier, train: TextData, val: TextData,
                 config: TrainConfig, progress_cb: ProgressCallback,
                 should_stop: ShouldStop) -> None:
        import optuna

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        # `search`: the classifier this run fits (its device plan is every trial's).
        self.search, self.train, self.val, self.config = search, train, val, config
        self.progress, self.should_stop = progress_cb, should_stop
        keys = config.search_candidates or available_candidates(config.model_dir)
        self.candidates = [get_spec(key) for key in keys]
        self.choices = [spec.key for spec in self.candidates] + [ENSEMBLE]
        self.budget = float(config.time_budget_minutes) * 60
        self.folder = Path(config.output_dir or ".") / "trials"
        self.folder.mkdir(parents=True, exist_ok=True)
        self.study = optuna.create_study(
            storage=self._storage(optuna), study_name=config.search_study or "search",
            direction="maximize", load_if_exists=True,
            sampler=optuna.samplers.TPESampler(seed=config.seed, n_startup_trials=5),
            pruner=optuna.pruners.MedianPruner(n_startup_trials=1, n_warmup_steps=0),
        )
        self.spent_before = float(self.study.user_attrs.get("spent_seconds", 0.0))
        self.started, self.saved_at = time.perf_counter(), 0.0
        self.pool = metadata_rows.pooled(train, val)  # its metadata too, if the job gave it
        self.folds = search_scoring.folds(self.pool, seed=config.seed)
        self.best: dict[str, tuple[float, int, BaseClassifier]] = {}
        self.defaults: dict[str, tuple[float, int, BaseClassifier]] = {}
        self.finish_cost: dict[str, float] = {}  # per kind: its share of the time after
        self.excluded: dict[str, str] = {}
        self.skipped_for_time: list[dict[str, Any]] = []
        self.shared_cache: dict[Any, Any] = {}  # embeddings computed once for every trial
        self.feature_memo = FeatureMemo()  # and TF-IDF fitted once per fold and setting
        self.stopped_reason = self.ended = self.verdict = ""
        self.timings: dict[str, float] = {"overhead_seconds": 0.0, "trial_seconds": 0.0}
        self.live: dict[str, Any] | None = None  # the running trial, for the leaderboard
        self._finished: list[Any] | None = None  # the study's trials, read once per change
        for spec in self.candidates:
            if why := search_space.missing_space(spec):
                logger.error("search: %s", why)  # a registry entry without its space: a bug
                self.excluded[spec.key] = why
                continue
            if spec.weights == "model_path" and not config.model_path:
                # The adapted kind's encoder: named by the job, gone since (its files deleted).
                self.excluded[spec.key] = "its adapted encoder's files are not on this machine"
                continue
            # A search never waits on a download it may not make: such a kind is left out.
            found = model_availability(spec.key, local_dir=config.model_dir)
            if found["status"] == "unreachable" or (
                    found["status"] == "download" and not config.allow_download):
                self.excluded[spec.key] = f"not on this machine: {found['detail']}"

    def _storage(self, optuna: Any) -> Any:
        url = self.config.search_storage or f"sqlite:///{self.folder.parent / 'search.sqlite3'}"
        # SQLite shares the file with the job's progress writes: wait for the lock, not fail.
        kwargs = {"connect_args": {"timeout": 60}} if url.startswith("sqlite") else {}
        return optuna.storages.RDBStorage(url, engine_kwargs=kwargs)

    def _trials(self) -> list[Any]:
        """The study's trials, read once after each change (each read copies every trial)."""
        if self._finished is None:
            self._finished = self.study.get_trials(deepcopy=False)
        return self._finished

    def _changed(self) -> None:
        self._finished = None

    # ---- the clock ---------------------------------------------------------------------------

    def spent(self) -> float:
        """Wall time used: in a job from search_clock_start (earlier attempts and this one's
        start-up included), otherwise the study's record plus this run's own time."""
        if self.config.search_clock_start > 0:
            return max(0.0, time.time() - self.config.search_clock_start)
        return self.spent_before + time.perf_counter() - self.started

    def remaining(self) -> float:
        return self.budget - self.spent()

    def reserve(self) -> float:
        """Seconds kept to score the test split with the winner, save it and load it back, and,
        once two kinds have finished, to try their ensemble (search_ensemble.ensemble_reserve)."""
        finish = FINISH_SECONDS + max((self.finish_cost.get(k, 0.0) for k in self.best),
                                      default=0.0)
        return finish + self.ensemble_reserve()

    def available(self) -> float:
        """Seconds a new trial may take."""
        return self.remaining() - self.reserve()

    def out_of_time(self) -> bool:
        return bool(self.best) and self.available() <= 0

    def _save_clock(self, *, force: bool = False) -> None:
        if force or time.perf_counter() - self.saved_at >= SAVE_EVERY_SECONDS:
            self.saved_at = time.perf_counter()
            self.study.set_user_attr("spent_seconds", self.spent())

    # ---- the run -----------------------------------------------------------------------------

    def run(self) -> tuple[BaseClassifier, dict[str, Any]]:
        self._recover()
        self._warm_embeddings()
        self._report(f"Search: {', '.join(self.choices[:-1])}; "
                     f"{self.remaining() / 60:.1f} of {self.budget / 60:g} min left")
        while not self.should_stop():
            if len(self._trials()) >= MAX_TRIALS:
                self.ended = f"The search ran its {MAX_TRIALS} trials."
                break
            spec, settings = self._next()
            if spec is None:
                break
            self._trial(spec, settings)
        if self.should_stop():
            self.stopped_reason = (f"Stopped on request after {self._count('COMPLETE')} "
                                   "finished trials")
        self._save_clock(force=True)
        if not self.best:
            if self.stopped_reason:
                raise TrainingStopped(None, "Search stopped before any candidate finished")
            reasons = "; ".join(f"{k}: {v}" for k, v in self.excluded.items())
            raise ValueError(f"No candidate could be trained. {reasons}".strip())
        winner, described = self._winner()
        self.feature_memo.clear()  # hundreds of megabytes the trials no longer need
        return winner, self._summary(described)

    def _next(self) -> tuple[ModelSpec | None, dict[str, Any] | None]:
        """The next candidate and the settings fixed for its trial (its defaults the first
        time; later, none, or a cost bound), or (None, None) with self.ended saying why."""
        tried = {t.params.get("model_type") for t in self._trials()}
        open_ = [s for s in self.candidates if s.key not in self.excluded]
        fresh = sorted((s for s in open_ if s.key not in tried), key=self._first_estimate)
        if fresh:
            spec = fresh[0]
            first = self._first_settings(spec)
            if first is None:
                self._skip_for_time(spec)
                return self._next()
            return spec, first
        if (rescore := self._pending_rescore()) is not None:
            return rescore  # before tuning: its kind's trials are then compared like with like
        for spec in open_:
            if self._trials_of(spec.key) >= search_space.max_trials(spec):
                self._skip(spec, f"it had its {search_space.max_trials(spec)} trials "
                                 f"({search_space.TRIALS_PER_SETTING} per setting tuned)")
        open_ = [s for s in open_ if s.key not in self.excluded]
        if not open_:
            self.ended = ("Every candidate had its trials: more would fit the noise of the "
                          "scoring rows rather than the task.")
            return None, None
        if self.available() <= 0:
            self.ended = "The time budget was spent."
            return None, None
        affordable = {s.key: fix for s in open_ if (fix := self._affordable(s)) is not None}
        if not affordable:
            self.ended = (f"No candidate's next trial fits the {max(0.0, self.available()):.0f} s "
                          "left before the final evaluation.")
            return None, None
        key = search_scoring.most_promising(
            bests={k: self._scored(number) for k, (_, number, _) in self.best.items()},
            keys=[s.key for s in open_ if s.key in affordable],
            trials={s.key: self._trials_of(s.key) for s in open_}, bonus=EXPLORE_BONUS)
        return get_spec(key), affordable[key] or None

    def _first_settings(self, spec: ModelSpec) -> dict[str, Any] | None:
        """A candidate's defaults; if they would not fit, the cheapest bound on them that does
        (one epoch instead of two); None if nothing fits. Until a trial has finished, the
        defaults of the cheapest candidate run whatever the estimate: a search returns a model."""
        settings = search_space.defaults(spec)
        if not self.best or self._estimate(spec, settings) <= self.available():
            return settings
        for fix in reversed(search_space.cheaper_fixes(spec)):  # cheapest first
            cheaper = {**settings, **fix}
            if (search_space.work_units(spec, cheaper) < search_space.work_units(spec, settings)
                    and self._estimate(spec, cheaper) <= self.available()):
                return cheaper
        return None

    def _affordable(self, spec: ModelSpec) -> dict[str, Any] | None:
        """{} when the candidate's open space fits the time left, the costliest bound that
        fits when only part of it does, None when not even its cheapest trial fits."""
        left = self.available()
        if self._estimate(spec, search_space.worst_case(spec)) <= left:
            return {}
        for fix in search_space.cheaper_fixes(spec):
            if self._estimate(spec, fix) <= left:
                return fix
        return None

    def _trial(self, spec: ModelSpec, settings: dict[str, Any] | None) -> None:
        import optuna

        tick = time.perf_counter()
        is_default = (spec.key not in {t.params.get("model_type") for t in self._trials()}
                      or self.rescoring is not None)  # a re-score is the default's score
        fixed = {"model_type": spec.key, **search_space.prefixed(spec, settings or {})}
        self.study.enqueue_trial(fixed)
        trial = self.study.ask()
        trial.suggest_categorical("model_type", self.choices)
        chosen = search_space.suggest(trial, spec)
        trial.set_user_attr("default", is_default)
        if self.rescoring is not None:
            trial.set_user_attr("rescores", self.rescoring)
        left = self.available()
        self.live = {"number": trial.number, "model_type": spec.key, "params": chosen,
                     "state": "running", "value": None, "seconds": None, "note": ""}
        self._report(f"Trial {trial.number}: {spec.key} {_short(chosen)}")
        pruned = {"flag": False}
        fit_start = time.perf_counter()
        self.timings["overhead_seconds"] += fit_start - tick
        state, value, note, clf, scores, oof = (optuna.trial.TrialState.COMPLETE, None, "",
                                                None, [], None)
        try:
            value, clf, scores, oof = self._score(spec, chosen, trial, pruned, is_default)
            if scores:
                note = (f"{len(scores)}-fold cross-validation, fold spread "
                        f"{statistics.pstdev(scores):.3f}")
        except TrainingStopped:
            state, note = self._stopped_note(pruned["flag"], left, spec, chosen)
        except Exception as exc:  # one candidate's failure must not end the search
            state = optuna.trial.TrialState.FAIL
            note = f"failed: {type(exc).__name__}: {exc}"[:300]
            self.excluded[spec.key] = note
            logger.warning("search trial %s (%s) failed: %s", trial.number, spec.key, exc)
        finally:
            shutil.rmtree(self._work_dir(trial.number), ignore_errors=True)
        seconds = time.perf_counter() - fit_start
        self.timings["trial_seconds"] += seconds
        tock = time.perf_counter()
        self._tell(trial, state, value, note, seconds, scores, clf)
        if value is not None and clf is not None:
            self._keep(spec, value, trial.number, clf, is_default, oof)
        self.live, self.rescoring = None, None
        self.timings["overhead_seconds"] += time.perf_counter() - tock
        self._report(f"Trial {trial.number}: {spec.key} " + (
            f"macro-F1 {value:.3f} in {seconds:.1f} s" if value is not None else note))

    def _score(self, spec: ModelSpec, chosen: dict[str, Any], trial: Any,
               pruned: dict[str, bool], is_default: bool,
               ) -> tuple[float, BaseClassifier | None, list[float], np.ndarray | None]:
        """(score, the fitted model if one is kept, fold scores, its out-of-fold probabilities
        through the kept model's calibration): cross-validated for a TF-IDF or embedding
        candidate, on validation for a transformer. A cross-validated trial fits its kept model
        on train (tuned on validation) only when it is kept."""
        config = self._config(spec, chosen, trial.number)

        def stop() -> bool:
            return self.should_stop() or pruned["flag"] or self.out_of_time()

        def forward(event: dict[str, Any]) -> None:
            self._forward(event, trial, spec, pruned)

        def read(*splits: TextData) -> tuple[TextData, ...]:  # in this kind's metadata form
            return metadata_rows.read_as(spec.kind, *splits)

        # The search's first trial runs whatever the clock says (a search returns a model):
        # when its folds do not fit the time left, one fit scored on validation does.
        late = not self.best and self._estimate(spec, chosen) > self.available()
        if spec.kind not in search_space.HEAD_KINDS or not self.folds or late:
            clf = self._candidate(spec)
            value = float(clf.fit(*read(self.train, self.val), config, forward, stop)
                          .get("macro_f1", 0.0))
            return value, clf, [], None
        raws = []
        for fit_rows, scored_rows in self.folds:
            if stop():
                raise TrainingStopped(None, "Stopped between cross-validation folds")
            fit_part, scored_part = read(self.pool.subset(fit_rows), self.pool.subset(scored_rows))
            fold = self._candidate(spec)
            fold.fit(fit_part, scored_part, config, forward, stop)
            raws.append(fold.predict_proba_raw(scored_part.texts))
        raw = np.concatenate(raws)
        scores = self._fold_scores(raw, fold.label_names)  # the fold models' rules saw those rows
        value = statistics.fmean(scores)
        if self.rescoring is not None:  # the re-scored trial's model: same settings, same fit
            kept = self._kept_model(self.rescoring)
            return value, kept, scores, None if kept is None else kept.calibration.apply(raw)
        best = self.best.get(spec.key)
        if (not is_default and best is not None and self._scored(best[1]).fold_scores
                and best[0] >= value):  # fold scores against fold scores only
            return value, None, scores, None
        clf = self._candidate(spec)
        # The kept model's own fit stops only on a cancel: its score is already known.
        train, val = read(self.train, self.val)
        clf.fit(train, val, config, forward, self.should_stop)
        # Its calibration and thresholds from every fold's held-out rows, not validation alone.
        clf.rules_out_of_fold(data=read(self._oof_rows())[0], raw=raw, val=val)
        return value, clf, scores, clf.calibration.apply(raw)

    def _forward(self, event: dict[str, Any], trial: Any, spec: ModelSpec,
                 pruned: dict[str, bool]) -> None:
        """A candidate's event, as search progress; per-epoch scores feed the pruner."""
        metrics = event.get("metrics") or {}
        if event.get("epoch") is not None and "macro_f1" in metrics:
            trial.report(float(metrics["macro_f1"]), step=max(0, round(float(event["epoch"]))))
            if trial.should_prune():
                pruned["flag"] = True
        self._save_clock()
        # A head's "Featurising" would repeat for every fold; a transformer's messages and the
        # embedding's progress locate a hang.
        message = str(event.get("message") or "")
        if spec.kind != "transformer" and not message.startswith("embedding:"):
            message = ""
        self.progress({"phase": "training", **self._clock(),
                       **({"message": f"Trial {trial.number} ({spec.key}): {message}"}
                          if message else {})})

    def _clock(self) -> dict[str, Any]:
        total = max(1, int(self.budget))
        return {"step": min(total, int(self.spent())), "total_steps": total, "total_epochs": 1}

    def _candidate(self, spec: ModelSpec) -> BaseClassifier:
        clf = spec.classifier_class()(spec.key, self.search.device_plan)
        shared = {"shared_cache": self.shared_cache, "feature_memo": self.feature_memo}
        for name in [name for name in shared if hasattr(clf, name)]:
            setattr(clf, name, shared[name])
        if hasattr(clf, "rules_folds"):
            clf.rules_folds = 0  # the search's own folds give its kept models their rules
        return clf

    def _config(self, spec: ModelSpec, chosen: dict[str, Any], number: int) -> TrainConfig:
        # A search's model_path is its adapted encoder's folder: the adapted kind's alone.
        path = self.config.model_path if spec.weights == "model_path" or not \
            self.config.encoder_model_id else None
        return dataclasses.replace(
            self.config, **chosen, output_dir=str(self._work_dir(number)), model_path=path,
            resume_from_checkpoint=None, search_candidates=[], member_paths=[],
            **metadata_rows.kind_reading(spec.kind, self.train))

    def _work_dir(self, number: int) -> Path:
        return self.folder / f"{number}-work"


def _short(settings: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
                     for k, v in settings.items())
