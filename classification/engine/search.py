"""Finding the best model for a dataset within a time budget: candidates tuned with Optuna.

One Optuna study per search, in the storage the job names (the app's own database), so a
resumed job continues it: its trials, the time they used, and, in the job's folder, the
artifact of the best trial of each kind.

Optuna's TPE sampler proposes parameters; which candidate gets the next trial is decided here,
because one categorical "model_type" would spend a CPU's budget on a transformer as readily as
on a TF-IDF fit. First every candidate runs once at its usual settings, cheapest first, so the
baselines are always on the board. Then the candidate with the best score, plus a bonus that
shrinks with its number of trials, gets the next one among those whose estimated time still
fits. Transformer trials report validation macro-F1 after each epoch and Optuna's median pruner
stops those trailing the earlier trials at the same epoch. At the end, an ensemble of the best
model of each kind is tuned on validation; it wins only by more than ENSEMBLE_MARGIN.

A stop request (Cancel) ends the running trial and keeps the best model found so far
(`stopped_reason` says so); the time budget ends a trial only once some trial has finished, so
a search always returns a model.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np

from . import search_estimates, search_space
from .base import BaseClassifier
from .registry import ModelSpec, get_spec, model_availability
from .types import (
    ProgressCallback,
    ShouldStop,
    TextData,
    TrainConfig,
    TrainingStopped,
)

logger = logging.getLogger(__name__)

ENSEMBLE = "ensemble"
ENSEMBLE_MARGIN = 0.005  # its weights are tuned on the rows that score it: demand a real gain
EXPLORE_BONUS = 0.02  # per 1/sqrt(trials of the candidate): a once-tried kind gets another look
MAX_TRIALS = 300  # one-second TF-IDF trials on a long budget: beyond this TPE gains nothing
LEADERBOARD_ROWS = 50


def available_candidates(model_dir: str | None = None) -> list[str]:
    """Every kind the New model form offers whose weights are on this machine (a search never
    downloads), except custom, which needs a folder named per job."""
    from .registry import REGISTRY

    return [key for key, spec in REGISTRY.items() if spec.offered and key != "custom"
            and model_availability(key, local_dir=model_dir)["status"] in ("bundled", "cached")]


class SearchClassifier(BaseClassifier):
    """Fits like any classifier; afterwards it is its winner (predictions, save, metrics)."""

    def __init__(self, model_type: str = "search", device_plan: Any = None) -> None:
        super().__init__(model_type, device_plan)
        self.winner: BaseClassifier | None = None
        self.stopped_reason = ""

    def fit(self, train: TextData, val: TextData, config: TrainConfig,
            progress_cb: ProgressCallback, should_stop: ShouldStop) -> dict[str, Any]:
        run = SearchRun(self, train, val, config, progress_cb, should_stop)
        winner, summary = run.run()
        self.winner, self.stopped_reason = winner, run.stopped_reason
        self.config = config
        for name in ("label_names", "multi_label", "thresholds", "class_offsets"):
            setattr(self, name, getattr(winner, name))
        winner.metrics = {**winner.metrics, "search": summary}
        self.metrics = winner.metrics
        self.timings = {**winner.timings, **run.timings}
        return self.metrics

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


class SearchRun:
    """One attempt of a search: the study, the clock, the best model of each kind."""

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
        self.started = time.perf_counter()
        self.best: dict[str, tuple[float, int, BaseClassifier]] = {}
        self.excluded: dict[str, str] = {}
        self.shared_cache: dict[Any, Any] = {}  # embeddings computed once for every trial
        self.stopped_reason = ""
        self.timings: dict[str, float] = {"overhead_seconds": 0.0, "trial_seconds": 0.0}
        self.live: dict[str, Any] | None = None  # the running trial, for the leaderboard
        self._finished: list[Any] | None = None  # the study's trials, read once per change
        for spec in self.candidates:
            if why := search_space.missing_space(spec):
                logger.error("search: %s", why)  # a registry entry without its space: a bug
                self.excluded[spec.key] = why
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
        """The study's trials, read from storage once after each change: the schedule, the
        estimates and the leaderboard all ask, and each read copies every trial."""
        if self._finished is None:
            self._finished = self.study.get_trials(deepcopy=False)
        return self._finished

    def _changed(self) -> None:
        self._finished = None

    # ---- the clock ---------------------------------------------------------------------------

    def spent(self) -> float:
        return self.spent_before + time.perf_counter() - self.started

    def remaining(self) -> float:
        return self.budget - self.spent()

    def out_of_time(self) -> bool:
        return bool(self.best) and self.remaining() <= 0

    # ---- the run -----------------------------------------------------------------------------

    def run(self) -> tuple[BaseClassifier, dict[str, Any]]:
        self._recover()
        self._report(f"Search: {', '.join(self.choices[:-1])}; "
                     f"{self.remaining() / 60:.1f} of {self.budget / 60:g} min left")
        while not self.should_stop() and len(self._trials()) < MAX_TRIALS:
            spec, settings = self._next()
            if spec is None:
                break
            self._trial(spec, settings)
        if self.should_stop():
            self.stopped_reason = (f"Stopped on request after {self._count('COMPLETE')} "
                                   "finished trials")
        self.study.set_user_attr("spent_seconds", self.spent())
        if not self.best:
            if self.stopped_reason:
                raise TrainingStopped(None, "Search stopped before any candidate finished")
            reasons = "; ".join(f"{k}: {v}" for k, v in self.excluded.items())
            raise ValueError(f"No candidate could be trained. {reasons}".strip())
        winner, described = self._winner()
        return winner, self._summary(described)

    def _next(self) -> tuple[ModelSpec | None, dict[str, Any] | None]:
        """The next candidate and, for its first trial, its default settings."""
        tried = {t.params.get("model_type") for t in self._trials()}
        open_ = [s for s in self.candidates if s.key not in self.excluded]
        fresh = sorted((s for s in open_ if s.key not in tried), key=self._first_estimate)
        if fresh:
            spec = fresh[0]
            if self.best and self._first_estimate(spec) > self.remaining():
                self._skip(spec, f"its first trial needs about "
                                 f"{self._first_estimate(spec) / 60:.1f} min")
                return self._next()
            return spec, search_space.defaults(spec)
        if self.remaining() <= 0:
            return None, None
        affordable = [s for s in open_ if self._estimate(s) <= self.remaining()]
        if not affordable:
            return None, None

        def promise(spec: ModelSpec) -> float:
            score = self.best[spec.key][0] if spec.key in self.best else 0.0
            return score + EXPLORE_BONUS / math.sqrt(1 + self._trials_of(spec.key))

        return max(affordable, key=promise), None

    def _skip(self, spec: ModelSpec, why: str) -> None:
        self.excluded[spec.key] = why
        self.progress({"phase": "training", "message": f"Not trying {spec.key}: {why}, "
                       f"{max(0.0, self.remaining()) / 60:.1f} min left"})

    def _trial(self, spec: ModelSpec, settings: dict[str, Any] | None) -> None:
        import optuna

        tick = time.perf_counter()
        fixed = {"model_type": spec.key, **search_space.prefixed(spec, settings or {})}
        self.study.enqueue_trial(fixed)
        trial = self.study.ask()
        trial.suggest_categorical("model_type", self.choices)
        chosen = search_space.suggest(trial, spec)
        self.live = {"number": trial.number, "model_type": spec.key, "params": chosen,
                     "state": "running", "value": None, "seconds": None, "note": ""}
        self._report(f"Trial {trial.number}: {spec.key} {_short(chosen)}")
        pruned = {"flag": False}
        fit_start = time.perf_counter()
        self.timings["overhead_seconds"] += fit_start - tick

        def stop() -> bool:
            return self.should_stop() or pruned["flag"] or self.out_of_time()

        def forward(event: dict[str, Any]) -> None:
            self._forward(event, trial, spec, pruned)

        clf: BaseClassifier | None = None
        state, value, note = optuna.trial.TrialState.COMPLETE, None, ""
        try:
            clf = self._candidate(spec)
            scores = clf.fit(self.train, self.val, self._config(spec, chosen, trial.number),
                             forward, stop)
            value = float(scores.get("macro_f1", 0.0))
        except TrainingStopped:
            state = optuna.trial.TrialState.PRUNED if not self.should_stop() else (
                optuna.trial.TrialState.FAIL)
            note = ("pruned: behind earlier trials" if pruned["flag"] else
                    "stopped: cancelled" if self.should_stop() else "stopped: out of time")
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
        trial.set_user_attr("seconds", round(seconds, 2))
        trial.set_user_attr("note", note)
        self.study.tell(trial, value if state == optuna.trial.TrialState.COMPLETE else None,
                        state=state)
        self._changed()
        if value is not None and clf is not None:
            self._keep_if_best(spec, value, trial.number, clf)
        self.study.set_user_attr("spent_seconds", self.spent())
        self.live = None
        self.timings["overhead_seconds"] += time.perf_counter() - tock
        self._report(f"Trial {trial.number}: {spec.key} "
                     + (f"macro-F1 {value:.3f} in {seconds:.1f} s" if value is not None
                        else note))

    def _forward(self, event: dict[str, Any], trial: Any, spec: ModelSpec,
                 pruned: dict[str, bool]) -> None:
        """A candidate's event, as search progress; per-epoch scores feed the pruner."""
        metrics = event.get("metrics") or {}
        if event.get("epoch") is not None and "macro_f1" in metrics:
            trial.report(float(metrics["macro_f1"]), step=max(0, round(float(event["epoch"]))))
            if trial.should_prune():
                pruned["flag"] = True
        # A TF-IDF fit's own messages would repeat every second; a transformer's locate a hang.
        message = "" if spec.kind == "baseline" else str(event.get("message") or "")
        self.progress({"phase": "training", **self._clock(),
                       **({"message": f"Trial {trial.number} ({spec.key}): {message}"}
                          if message else {})})

    def _clock(self) -> dict[str, Any]:
        total = max(1, int(self.budget))
        return {"step": min(total, int(self.spent())), "total_steps": total, "total_epochs": 1}

    def _candidate(self, spec: ModelSpec) -> BaseClassifier:
        clf = spec.classifier_class()(spec.key, self.search.device_plan)
        if hasattr(clf, "shared_cache"):
            clf.shared_cache = self.shared_cache
        return clf

    def _config(self, spec: ModelSpec, chosen: dict[str, Any], number: int) -> TrainConfig:
        return dataclasses.replace(
            self.config, **chosen, output_dir=str(self._work_dir(number)),
            resume_from_checkpoint=None, search_candidates=[], member_paths=[])

    def _work_dir(self, number: int) -> Path:
        return self.folder / f"{number}-work"

    def _keep_if_best(self, spec: ModelSpec, value: float, number: int,
                      clf: BaseClassifier) -> None:
        """Only the best trial of each kind keeps its artifact: the ensemble and the winner
        come from those, and a resumed search reloads them."""
        old = self.best.get(spec.key)
        if old is not None and old[0] >= value:
            return
        clf.save(str(self.folder / str(number)))
        self.best[spec.key] = (value, number, clf)
        if old is not None:
            shutil.rmtree(self.folder / str(old[1]), ignore_errors=True)

    # ---- resuming ----------------------------------------------------------------------------

    def _recover(self) -> None:
        """A resumed study: trials left running by a killed attempt fail; each kind's best
        finished trial is reloaded from its artifact."""
        import optuna

        from classification.ml_models import load_classifier

        for trial in self.study.get_trials(deepcopy=False,
                                           states=(optuna.trial.TrialState.RUNNING,)):
            self.study.tell(trial.number, state=optuna.trial.TrialState.FAIL,
                            skip_if_finished=True)
        self._changed()
        done = self.study.get_trials(deepcopy=False,
                                     states=(optuna.trial.TrialState.COMPLETE,))
        for trial in sorted(done, key=lambda t: -(t.value or 0.0)):
            kind = trial.params.get("model_type")
            path = self.folder / str(trial.number)
            if kind in self.best or kind == ENSEMBLE or not (path / "manifest.json").is_file():
                continue
            clf = load_classifier(str(path))
            self.best[kind] = (float(trial.value or 0.0), trial.number, clf)
        if done:
            self.progress({"phase": "training", "message":
                           f"Resuming the search: {len(done)} finished trials kept, "
                           f"{self.spent_before / 60:.1f} min of the budget used"})

    # ---- estimates ---------------------------------------------------------------------------

    def _trials_of(self, key: str) -> int:
        return sum(1 for t in self._trials() if t.params.get("model_type") == key)

    def _first_estimate(self, spec: ModelSpec) -> float:
        return self._estimate(spec, search_space.defaults(spec))

    def _estimate(self, spec: ModelSpec, settings: dict[str, Any] | None = None) -> float:
        return search_estimates.trial_seconds(
            spec=spec, settings=settings or search_space.defaults(spec), trials=self._trials(),
            device_plan=self.search.device_plan, rows=len(self.train) + len(self.val))

    # ---- the outcome -------------------------------------------------------------------------

    def _winner(self) -> tuple[BaseClassifier, dict[str, Any]]:
        ranked = sorted(self.best.items(), key=lambda item: -item[1][0])
        kind, (value, number, clf) = ranked[0]
        described = {"model_type": kind, "trial": number, "validation_macro_f1": value,
                     "params": search_space.unprefixed(self._trials()[number].params)}
        if self.config.search_ensemble and len(ranked) >= 2 and not self.stopped_reason:
            ensemble = self._ensemble([item[1][2] for item in ranked[:4]])
            if ensemble is not None and ensemble[0] > value + ENSEMBLE_MARGIN:
                clf, described = ensemble[1], ensemble[2]
        return clf, described

    def _ensemble(self, members: list[BaseClassifier]) -> tuple[float, Any, dict] | None:
        import optuna

        from .ensemble import EnsembleClassifier

        self._report(f"Trying an ensemble of {', '.join(m.model_type for m in members)}")
        start = time.perf_counter()
        try:
            clf = EnsembleClassifier.from_members(members, val=self.val, config=self.config,
                                                  should_stop=self.should_stop)
        except TrainingStopped:
            return None
        value = float(clf.metrics.get("macro_f1", 0.0))
        self.study.enqueue_trial({"model_type": ENSEMBLE})
        trial = self.study.ask()
        trial.suggest_categorical("model_type", self.choices)
        members_desc = clf.metrics.get("members") or []
        trial.set_user_attr("seconds", round(time.perf_counter() - start, 2))
        trial.set_user_attr("note", "weights " + ", ".join(
            f"{m['model_type']} {m['weight']:.1f}" for m in members_desc))
        self.study.tell(trial, value, state=optuna.trial.TrialState.COMPLETE)
        self._changed()
        self._report(f"Ensemble: macro-F1 {value:.3f}")
        return value, clf, {"model_type": ENSEMBLE, "trial": trial.number,
                            "validation_macro_f1": value, "params": {},
                            "members": members_desc}

    def _count(self, state: str) -> int:
        return sum(1 for t in self._trials() if t.state.name == state)

    def _summary(self, winner: dict[str, Any]) -> dict[str, Any]:
        return {
            "winner": winner,
            "study": self.study.study_name,
            "budget_minutes": self.budget / 60,
            "spent_seconds": round(self.spent(), 1),
            "trials": {state.lower(): self._count(state)
                       for state in ("COMPLETE", "PRUNED", "FAIL")},
            "candidates": [spec.key for spec in self.candidates],
            "not_tried": self.excluded,
            "stopped": self.stopped_reason,
            "overhead_seconds": round(self.timings["overhead_seconds"], 3),
        }

    def leaderboard(self) -> list[dict[str, Any]]:
        """Every trial as the job page shows it, best first; the running one on top."""
        rows = []
        for t in self._trials():
            if t.state.name == "RUNNING":
                continue
            rows.append({"number": t.number, "model_type": t.params.get("model_type", "?"),
                         "params": search_space.unprefixed(t.params), "value": t.value,
                         "state": t.state.name.lower(), "seconds": t.user_attrs.get("seconds"),
                         "note": t.user_attrs.get("note", "")})
        rows.sort(key=lambda r: (r["value"] is None, -(r["value"] or 0.0), r["number"]))
        return ([self.live] if self.live else []) + rows[:LEADERBOARD_ROWS]

    def _report(self, message: str) -> None:
        self.progress({"phase": "training", **self._clock(), "message": message,
                       "leaderboard": self.leaderboard()})


def _short(settings: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
                     for k, v in settings.items())
