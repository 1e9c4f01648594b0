"""What a search keeps, resumes from and ends with: the best and default model of each kind,
the winner (checked against the untuned defaults, search_scoring.verdict), the ensemble, the
summary the model page shows (with every trial, and what a larger budget would have added) and
the leaderboard the job page shows.

SearchOutcome is a part of engine/search.py's SearchRun, kept apart for size; it reads the
run's study, folders and kept models.
"""

from __future__ import annotations

import logging
import shutil
import statistics
import time
from typing import Any

from . import ensemble_score, metadata_rows, search_estimates, search_scoring, search_space
from .base import BaseClassifier
from .feature_memo import FeatureMemo
from .registry import REGISTRY, ModelSpec
from .search_basis import LikeWithLike

ENSEMBLE = "ensemble"
ENSEMBLE_SECONDS = 5.0  # the least time left for an ensemble to be tried
# Kept aside, once two kinds have finished, so that trials stop in time for their ensemble: a
# budget spent to the last second on one more trial left no ensemble ever tried (issue 39).
ENSEMBLE_SHARE, ENSEMBLE_MAX_SECONDS = 0.08, 60.0
# Judging it out of fold tunes its weights five times on four fifths of the rows: measured at
# 3 to 7 times their tuning on all of validation (300-1,000 rows, 2-4 members, single- and
# multi-label, on a loaded 2-core machine). Judged only when that fits what is left.
CROSS_FIT_FACTOR = 6.0
LEADERBOARD_ROWS = 50
RECOVERED_NOTE = ("failed: the attempt running it ended before it finished (cancelled, "
                  "stalled or crashed); Resume went on without it")
logger = logging.getLogger(__name__)


class SearchOutcome(LikeWithLike):
    """The keeping and concluding half of SearchRun (attributes are SearchRun's)."""

    ensembling = False  # set once the search concludes: the ensemble's reserve is spent then

    def ensemble_reserve(self) -> float:
        """Seconds trials leave for the ensemble: none without two finished kinds to ensemble,
        when the search makes none, or once it is being tried."""
        if self.ensembling or not self.config.search_ensemble or len(self.best) < 2:
            return 0.0
        return min(ENSEMBLE_MAX_SECONDS, ENSEMBLE_SHARE * self.budget)

    finish_cost: dict[str, float]
    shared_cache: dict[Any, Any]
    _embedded_told = 0.0  # the shared cache's embedding seconds when the last trial was told
    feature_memo: FeatureMemo
    _memo_told = (0, 0)  # the memo's (misses, hits) when the last trial was told
    embed_texts: list[str] | None = None  # the pool as an embedding kind reads it
    skipped_for_time: list[dict[str, Any]]  # each kind whose first trial did not fit, and when

    def _warm_embeddings(self) -> None:
        """Before the first estimate: what the deployment's embedding cache holds of the pool
        (an earlier search or job embedded it), loaded into the trials' shared cache, so an
        embedding kind is scheduled at the cost of the texts it still has to embed."""
        from .baselines import embeddings_warm

        for spec in self.candidates:
            if spec.kind != "embedding" or spec.key in self.excluded:
                continue
            self.embed_texts = metadata_rows.read_as(spec.kind, self.pool)[0].texts
            config = self._config(spec, search_space.defaults(spec), -1)
            try:
                found = embeddings_warm(cache=self.shared_cache, config=config,
                                        model_type=spec.key, texts=self.embed_texts)
            except Exception as error:  # the kind's own trial will say what is wrong
                logger.warning("search: embedding cache not read for %s: %s", spec.key, error)
                continue
            if found:
                self._report(f"{spec.key}: {found} of {len(set(self.embed_texts))} texts "
                             "already embedded (embedding cache)")

    def _skip(self, spec: ModelSpec, why: str) -> None:
        self.excluded[spec.key] = why
        self.progress({"phase": "training", "message": f"Not trying {spec.key}: {why}, "
                       f"{max(0.0, self.remaining()) / 60:.1f} min left"})

    def _skip_for_time(self, spec: ModelSpec) -> None:
        """A kind whose first trial does not fit what is left: what it would have needed is
        kept, so the report can say what a larger budget would add
        (search_estimates.larger_budgets)."""
        estimate = self._first_estimate(spec)
        self.skipped_for_time.append({
            "model_type": spec.key, "kind": spec.kind, "estimate_seconds": round(estimate, 1),
            "spent_seconds": round(self.spent(), 1), "reserve_seconds": round(self.reserve(), 1)})
        self._skip(spec, f"its first trial needs about {estimate / 60:.1f} min")

    # ---- keeping -----------------------------------------------------------------------------

    def _keep(self, spec: Any, value: float, number: int, clf: BaseClassifier,
              is_default: bool) -> None:
        """Only the best and the default trial of each kind keep their artifacts: the winner,
        the ensemble and the verdict come from those, and a resumed search reloads them."""
        self.finish_cost[spec.key] = max(self.finish_cost.get(spec.key, 0.0),
                                         self._finish_estimate(spec, clf))
        old = self.best.get(spec.key)
        # Compared on the rows both were scored on (search_basis.LikeWithLike._beats).
        if old is not None and not is_default and not self._beats(number, old[1]):
            return
        clf.save(str(self.folder / str(number)))
        if is_default:
            self.defaults[spec.key] = (value, number, clf)
        if old is None or self._beats(number, old[1]):
            self.best[spec.key] = (value, number, clf)
            kept = {n for _, n, _ in self.defaults.values()}
            if old is not None and old[1] not in kept:
                shutil.rmtree(self.folder / str(old[1]), ignore_errors=True)

    def _finish_estimate(self, spec: Any, clf: BaseClassifier) -> float:
        """Seconds the job needs after the search if this kind wins: scoring about as many
        test rows as validation has, loading the artifact back (its encoder too), twice over
        to be safe on a loaded machine."""
        cache = getattr(clf, "shared_cache", None) or {}
        per_text = float(cache.get("embed_seconds_per_text", 0.0))
        load = float(cache.get("encoder_load_seconds", 0.0))
        if spec.kind == "transformer":
            # A forward pass costs about a third of a training step's forward and backward.
            rate = float(clf.timings.get("train_samples_per_second", 0.0) or 0.0)
            per_text = 1.0 / (3.0 * rate) if rate > 0 else 0.0
            load = float(clf.timings.get("load_seconds", 0.0))
        return 2.0 * (per_text * len(self.val) + load)

    # ---- a trial's end ------------------------------------------------------------------------

    def _stopped_note(self, pruned: bool, left: float, spec: ModelSpec,
                      chosen: dict[str, Any]) -> tuple[Any, str]:
        """A trial ended by a stop: its state, and its reason in words."""
        import optuna

        if self.should_stop():
            return optuna.trial.TrialState.FAIL, "stopped: cancelled"
        if pruned:
            return optuna.trial.TrialState.PRUNED, "pruned: behind earlier trials at this epoch"
        return optuna.trial.TrialState.PRUNED, (
            f"stopped: out of time (estimated {self._estimate(spec, chosen):.0f} s, "
            f"{max(0.0, left):.0f} s were left when it started)")

    def _tell(self, trial: Any, state: Any, value: float | None, note: str, seconds: float,
              scores: list[float], clf: BaseClassifier | None = None) -> None:
        """The trial's end, with its score on the validation split when it has one: its own
        (no folds), or its kept model's (fitted on train), for comparing it like with like."""
        import optuna

        trial.set_user_attr("seconds", round(seconds, 2))
        # Trials run one at a time, so what was embedded since the last one was told is this
        # trial's; later trials find those texts cached (search_estimates.trial_seconds).
        embedded = float(self.shared_cache.get("embed_seconds_total", 0.0))
        trial.set_user_attr("embed_seconds", round(embedded - self._embedded_told, 2))
        self._embedded_told = embedded
        # Likewise its TF-IDF fits: fitted, or reused from an earlier trial's same fold.
        memo = self.feature_memo
        trial.set_user_attr("features_fitted", memo.misses - self._memo_told[0])
        trial.set_user_attr("features_reused", memo.hits - self._memo_told[1])
        self._memo_told = (memo.misses, memo.hits)
        trial.set_user_attr("note", note)
        if scores:
            trial.set_user_attr("fold_scores", [round(s, 5) for s in scores])
        validation = value if not scores else (clf.metrics or {}).get("macro_f1") if (
            clf is not None) else None
        if validation is not None:
            trial.set_user_attr("validation_score", round(float(validation), 5))
        self.study.tell(trial, value if state == optuna.trial.TrialState.COMPLETE else None,
                        state=state)
        self._changed()
        self._save_clock(force=True)

    # ---- resuming ----------------------------------------------------------------------------

    def _recover(self) -> None:
        """A resumed study: trials left running by a killed attempt fail, with that reason;
        each kind's best and default finished trials are reloaded from their artifacts."""
        import optuna

        from classification.ml_models import load_classifier

        for trial in self.study.get_trials(deepcopy=False,
                                           states=(optuna.trial.TrialState.RUNNING,)):
            self.study._storage.set_trial_user_attr(trial._trial_id, "note", RECOVERED_NOTE)
            self.study.tell(trial.number, state=optuna.trial.TrialState.FAIL,
                            skip_if_finished=True)
        self._changed()
        done = self.study.get_trials(deepcopy=False,
                                     states=(optuna.trial.TrialState.COMPLETE,))
        superseded = self._rescored()  # a validation-only trial re-scored by cross-validation
        for trial in sorted(done, key=lambda t: -(t.value or 0.0)):
            kind = trial.params.get("model_type")
            path = self.folder / str(trial.number)
            if (kind == ENSEMBLE or trial.number in superseded
                    or not (path / "manifest.json").is_file()):
                continue
            is_default = bool(trial.user_attrs.get("default"))
            if kind in self.best and not (is_default and kind not in self.defaults):
                continue
            entry = (float(trial.value or 0.0), trial.number, load_classifier(str(path)))
            self.best.setdefault(kind, entry)
            if is_default:
                self.defaults[kind] = entry
        if done:
            self.progress({"phase": "training", "message":
                           f"Resuming the search: {len(done)} finished trials kept, "
                           f"{self.spent() / 60:.1f} min of the budget used"})

    # ---- the outcome -------------------------------------------------------------------------

    def _validation_only_trials(self) -> int:
        """Single-kind trials scored on the validation split alone (complete, or pruned with
        their last score) and not re-scored by folds: those a validation-only challenger was
        picked from."""
        superseded = self._rescored()
        return sum(1 for t in self._trials() if t.value is not None
                   and t.params.get("model_type") != ENSEMBLE
                   and not t.user_attrs.get("fold_scores") and t.number not in superseded)

    def _winner(self) -> tuple[BaseClassifier, dict[str, Any]]:
        """The best kept trial, if it beats the best untuned default by more than the noise
        (else that default), every score on one basis (search_scoring.choose); then an ensemble
        of the best of each kind, if it beats that too, both judged out of fold on the same
        folds of the validation rows (ensemble_score)."""
        choice = search_scoring.choose(
            [self._scored(n) for _, n, _ in self.best.values()],
            [self._scored(n) for _, n, _ in self.defaults.values()], val_rows=len(self.val),
            challengers=self._validation_only_trials())
        self.verdict, chosen = choice.verdict, choice.trial
        clf = self._kept_model(chosen.number)
        assert clf is not None  # chosen among the kept trials
        alone = chosen.on(search_scoring.VALIDATION)
        described = {"model_type": chosen.model_type, "trial": chosen.number,
                     "validation_macro_f1": chosen.value, "basis": choice.basis,
                     "validation_split_macro_f1": alone,
                     "params": search_space.unprefixed(self._trials()[chosen.number].params)}
        self.ensembling = True  # the time kept for it is its own now
        ensemble_wanted = self.config.search_ensemble and len(self.best) >= 2
        if ensemble_wanted and not self.stopped_reason and (
                self.remaining() - self.reserve() <= ENSEMBLE_SECONDS):
            self.verdict += (f" No ensemble was tried: {max(0.0, self.remaining()):.0f} s were "
                             "left, too few to judge one.")
        elif ensemble_wanted and not self.stopped_reason:
            ranked = sorted(self.best.values(), key=lambda e: -self._scored(e[1]).on(choice.basis))
            labelled = sum(1 for row in self.val.labels if row)
            if labelled < ensemble_score.MIN_ROWS:
                self.verdict += (f" No ensemble was tried: {labelled} labelled validation rows "
                                 f"are too few to judge one out of fold (it needs "
                                 f"{ensemble_score.MIN_ROWS}).")
                return clf, described
            tried = self._ensemble([m for _, _, m in ranked[:4]], clf, chosen.model_type)
            if tried is None:
                return clf, described
            judged, ensemble, about = tried
            # Both out of fold on the same validation folds (ensemble_score): the winner's own
            # validation score has its thresholds tuned on the rows that score it.
            if judged.wins:
                clf, described = ensemble, about
                self.verdict += (
                    f" An ensemble of the best of each kind (macro-F1 {judged.ensemble:.3f} "
                    f"{judged.basis}) beat {chosen.model_type} scored the same way "
                    f"({judged.alone:.3f}) by more than {judged.margin:.3f}, and is the model.")
            else:
                self.verdict += (
                    f" An ensemble of the best of each kind was tried and not kept: macro-F1 "
                    f"{judged.ensemble:.3f} {judged.basis}, against {judged.alone:.3f} for "
                    f"{chosen.model_type} scored the same way; it needed more than "
                    f"{judged.margin:.3f} over it.")
        return clf, described

    def _ensemble(self, members: list[BaseClassifier], alone: BaseClassifier,
                  alone_type: str) -> tuple[Any, Any, dict] | None:
        """An ensemble of `members` tuned on validation, and its judgement against `alone` (the
        winner), both out of fold on the same validation rows (ensemble_score); None when it
        was stopped, out of time, or there are too few validation rows to judge it."""

        from .ensemble import EnsembleClassifier
        from .types import TrainingStopped

        self._report(f"Trying an ensemble of {', '.join(m.model_type for m in members)}")
        start = time.perf_counter()

        def fits(seconds: float) -> bool:  # another fold as long as the last one
            return not self.should_stop() and self.remaining() - self.reserve() > seconds

        try:
            clf = EnsembleClassifier.from_members(members, val=self.val, config=self.config,
                                                  should_stop=self.should_stop)
            tuned = clf.tuned_on
            assert tuned is not None  # from_members keeps the rows it was tuned on
            # The cross-fit tunes the weights once per fold, on four fifths of the rows.
            needed = CROSS_FIT_FACTOR * float(clf.timings.get("weights_seconds", 0.0))
            if needed > self.remaining() - self.reserve():
                self._report(f"Ensemble not judged: judging it out of fold needs about "
                             f"{needed:.0f} s, more than is left")
                return None
            judged = ensemble_score.ensemble_judge(
                probs=tuned.probs, alone=self._alone_probs(alone, members, tuned),
                truth=tuned.truth, multi_label=clf.multi_label, fits=fits)
        except TrainingStopped:
            self._report("Ensemble not judged: stopped, or out of time")
            return None
        if judged is None:  # the labelled rows were counted before: not reached
            return None
        in_sample = float(clf.metrics.get("macro_f1", 0.0))
        members_desc = clf.metrics.get("members") or []
        number = self._ensemble_trial(judged, in_sample=in_sample, members_desc=members_desc,
                                      alone_type=alone_type,
                                      seconds=time.perf_counter() - start)
        self._report(f"Ensemble: macro-F1 {judged.ensemble:.3f} {judged.basis} "
                     f"({alone_type} alone: {judged.alone:.3f})")
        return judged, clf, {"model_type": ENSEMBLE, "trial": number,
                             "validation_macro_f1": judged.ensemble, "params": {},
                             "basis": search_scoring.VALIDATION,
                             "out_of_fold": judged.basis,
                             "validation_split_macro_f1": in_sample,
                             "members": members_desc}

    def _ensemble_trial(self, judged: Any, *, in_sample: float, members_desc: list[dict],
                        alone_type: str, seconds: float) -> int:
        """The ensemble as a completed trial of the study, valued out of fold; its number."""
        import optuna

        self.study.enqueue_trial({"model_type": ENSEMBLE})
        trial = self.study.ask()
        trial.suggest_categorical("model_type", self.choices)
        trial.set_user_attr("seconds", round(seconds, 2))
        trial.set_user_attr("note", (
            f"{judged.basis}: weights and thresholds tuned on the other folds, against "
            f"{judged.alone:.3f} for {alone_type} scored the same way; {in_sample:.3f} tuned "
            "and scored on all of validation; weights " + ", ".join(
                f"{m['model_type']} {m['weight']:.1f}" for m in members_desc)))
        # The validation column, like every trial's: the model tuned and scored on validation.
        trial.set_user_attr("validation_score", round(in_sample, 5))
        trial.set_user_attr("out_of_fold", {
            "rows": judged.rows, "folds": judged.folds, "ensemble": round(judged.ensemble, 5),
            "alone": round(judged.alone, 5), "alone_model_type": alone_type,
            "margin": round(judged.margin, 5), "seconds": round(judged.seconds, 2)})
        self.study.tell(trial, judged.ensemble, state=optuna.trial.TrialState.COMPLETE)
        self._changed()
        return trial.number

    def _alone_probs(self, alone: BaseClassifier, members: list[BaseClassifier],
                     tuned: Any) -> Any:
        """The winner's probabilities on the rows the ensemble was tuned on, as the winner
        reads them: the ones the ensemble scored when it is a member reading the same texts."""
        from .metadata_rows import composed, model_reads

        fields, style = model_reads(alone)
        val = composed(self.val, fields=fields, style=style)
        val = val.subset([i for i, row in enumerate(val.labels) if row])
        for member, prob in zip(members, tuned.probs, strict=True):
            if member is alone and list(val.texts) == tuned.texts:
                return prob
        return alone.predict_proba(val.texts)

    def _count(self, state: str) -> int:
        return sum(1 for t in self._trials() if t.state.name == state)

    def _summary(self, winner: dict[str, Any]) -> dict[str, Any]:
        return {
            "winner": winner,
            "verdict": self.verdict,
            "ended": self.ended,
            "scoring": (f"{len(self.folds)}-fold cross-validation on train and validation for "
                        "TF-IDF and embedding models; the validation split for transformers"
                        if self.folds else "the validation split"),
            "study": self.study.study_name,
            "budget_minutes": self.budget / 60,
            "spent_seconds": round(self.spent(), 1),
            "trials": {state.lower(): self._count(state)
                       for state in ("COMPLETE", "PRUNED", "FAIL")},
            "candidates": [spec.key for spec in self.candidates],
            "not_tried": self.excluded,
            "larger_budget": search_estimates.larger_budgets(
                skipped=self.skipped_for_time, budget_seconds=self.budget),
            "stopped": self.stopped_reason,
            "overhead_seconds": round(self.timings["overhead_seconds"], 3),
            # Every trial, as the job page's leaderboard shows it: the model page keeps them
            # once the job (and its leaderboard) is gone.
            "trial_rows": self._trial_rows(),
        }

    def _trial_rows(self) -> list[dict[str, Any]]:
        """Every finished, pruned or failed trial, best first. A trial that did not finish says
        why in its note."""
        rows = []
        rescored = self._rescored()
        for t in self._trials():
            if t.state.name == "RUNNING":
                continue
            notes = [t.user_attrs.get("note", "") or (
                RECOVERED_NOTE if t.state.name == "FAIL" else "")]
            folds = t.user_attrs.get("fold_scores") or []
            if self._validation_only(t):
                # The search's first trial, when its folds did not fit the time left: its
                # score is not on the same rows as the cross-validated ones.
                notes.insert(0, "one fit scored on validation (its folds did not fit the time)"
                             + (f"; re-scored by cross-validation as trial {rescored[t.number]}"
                                if t.number in rescored else ""))
            if t.user_attrs.get("rescores") is not None:
                notes.insert(0, f"trial {t.user_attrs['rescores']} re-scored by "
                                "cross-validation, its model kept")
            if t.user_attrs.get("default"):
                notes.insert(0, "usual settings")
            if t.user_attrs.get("features_reused") and not t.user_attrs.get("features_fitted"):
                notes.append("TF-IDF features reused from an earlier trial's folds")
            note = "; ".join(n for n in notes if n)
            rows.append({"number": t.number, "model_type": t.params.get("model_type", "?"),
                         "params": search_space.unprefixed(t.params), "value": t.value,
                         "spread": round(statistics.pstdev(folds), 4) if len(folds) > 1
                         else None,
                         "validation": t.user_attrs.get("validation_score"),
                         "state": t.state.name.lower(), "seconds": t.user_attrs.get("seconds"),
                         "embed_seconds": t.user_attrs.get("embed_seconds"),
                         "embeddings": embeddings_said(t), "note": note})
        rows.sort(key=lambda r: (r["value"] is None, -(r["value"] or 0.0), r["number"]))
        return rows

    def leaderboard(self) -> list[dict[str, Any]]:
        """The trials as the job page shows them, best first; the running one on top."""
        return ([self.live] if self.live else []) + self._trial_rows()[:LEADERBOARD_ROWS]

    def _report(self, message: str) -> None:
        self.progress({"phase": "training", **self._clock(), "message": message,
                       "leaderboard": self.leaderboard()})


def embeddings_said(trial: Any) -> str:
    """Where an embedding kind's trial got its embeddings: "cached" (an earlier trial, search
    or job had embedded every text) or "computed, 74 s"; "" for the other kinds, whose trials
    embed nothing, and for a trial that ended before it embedded anything."""
    spec = REGISTRY.get(str(trial.params.get("model_type")))
    if spec is None or spec.kind != "embedding":
        return ""
    seconds = float(trial.user_attrs.get("embed_seconds") or 0.0)
    if seconds > 0:
        return f"computed, {seconds:.0f} s" if seconds >= 1 else f"computed, {seconds:.1f} s"
    return "cached" if trial.state.name == "COMPLETE" else ""
