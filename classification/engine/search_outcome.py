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
from typing import Any

import numpy as np

from . import metadata_rows, search_estimates, search_scoring, search_space
from .base import BaseClassifier
from .feature_memo import FeatureMemo
from .registry import REGISTRY, ModelSpec
from .search_basis import LikeWithLike
from .search_ensemble import ENSEMBLE, SearchEnsemble

LEADERBOARD_ROWS = 50
RECOVERED_NOTE = ("failed: the attempt running it ended before it finished (cancelled, "
                  "stalled or crashed); Resume went on without it")
logger = logging.getLogger(__name__)


class SearchOutcome(LikeWithLike, SearchEnsemble):
    """The keeping and concluding half of SearchRun (attributes are SearchRun's)."""

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
              is_default: bool, oof: np.ndarray | None = None) -> None:
        """Only the best and the default trial of each kind keep their artifacts (and `oof`,
        their out-of-fold probabilities, search_ensemble): the winner, the ensemble and the
        verdict come from those, and a resumed search reloads them."""
        self.finish_cost[spec.key] = max(self.finish_cost.get(spec.key, 0.0),
                                         self._finish_estimate(spec, clf))
        old = self.best.get(spec.key)
        # Compared on the rows both were scored on (search_basis.LikeWithLike._beats).
        if old is not None and not is_default and not self._beats(number, old[1]):
            return
        if oof is not None:  # first: a kept trial's folder is never seen without it
            self._oof_save(number, oof)
        clf.save(str(self.folder / str(number)))
        if is_default:
            self.defaults[spec.key] = (value, number, clf)
        if old is None or self._beats(number, old[1]):
            self.best[spec.key] = (value, number, clf)
            kept = {n for _, n, _ in self.defaults.values()}
            if old is not None and old[1] not in kept:
                shutil.rmtree(self.folder / str(old[1]), ignore_errors=True)
                self._oof_path(old[1]).unlink(missing_ok=True)

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
        rows (search_ensemble)."""
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
        return self._ensemble_verdict(clf, described, chosen, choice.basis)

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
            "transformer": self._transformer_said(),
            "overhead_seconds": round(self.timings["overhead_seconds"], 3),
            # Every trial, as the job page's leaderboard shows it: the model page keeps them
            # once the job (and its leaderboard) is gone.
            "trial_rows": self._trial_rows(),
        }

    def _transformer_said(self) -> str:
        """Where the best fine-tuned transformer lost to another kind within the budget, a
        sentence saying so with both scores; "" where none was tried or one came first."""
        kept = {k: v for k, v in self.best.items() if k != ENSEMBLE and k in REGISTRY}
        tuned = {k: v for k, v in kept.items() if REGISTRY[k].kind == "transformer"}
        others = {k: v for k, v in kept.items() if k not in tuned}
        if not tuned or not others:
            return ""
        kind, (score, number, _) = max(tuned.items(), key=lambda item: item[1][0])
        rival, (best, rival_number, _) = max(others.items(), key=lambda item: item[1][0])
        if score >= best:
            return ""
        basis = (" (the transformer on the validation split, the others by cross-validation)"
                 if self.folds else "")
        return (f"Within the {self.budget / 60:.1f}-minute budget the best fine-tuned "
                f"transformer, {kind} (trial {number}), scored macro-F1 {score:.3f}, "
                f"{best - score:.3f} below {rival} (trial {rival_number}, {best:.3f}){basis}.")

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
