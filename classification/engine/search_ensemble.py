"""A search's ensemble: tried once the winner is chosen, kept only when it beats the winner out
of fold (ensemble_score), and recorded as a trial of the study.

Each cross-validated trial a search keeps (the best and the default of a TF-IDF or embedding
kind) leaves its out-of-fold probabilities beside its artifact: every pooled row, scored by the
fold model that never saw it, through the kept model's calibration. When every member and the
winner have them, the ensemble's weights and rules are tuned on those rows and it is judged on
them, ten times validation's rows; a kind scored on validation only (a fine-tuned
transformer) is then left out of it rather than sending every kind back to validation, and
tried with the others on validation only when that ensemble is not kept. Without the winner's
own, on the validation split. On the 5-class corpus a 200-row validation judgement turned down
an ensemble of two kinds whose defaults were within 0.01 of each other (issue 39,
docs/figures/search_out_of_fold.md).

SearchEnsemble is a part of engine/search.py's SearchRun, kept apart for size; it reads the
run's study, folds, pool and kept models.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from . import ensemble_score, search_scoring
from .base import BaseClassifier
from .ensemble import TunedOn
from .metrics import encode_labels
from .types import TextData

ENSEMBLE = "ensemble"
ENSEMBLE_SECONDS = 5.0  # the least time left for an ensemble to be tried
# Kept aside, once two kinds have finished, so that trials stop in time for their ensemble: a
# budget spent to the last second on one more trial left no ensemble ever tried (issue 39).
ENSEMBLE_SHARE, ENSEMBLE_MAX_SECONDS = 0.08, 60.0
# Judging it out of fold tunes its weights five times on four fifths of the rows: measured at
# 3 to 7 times their tuning on all of them (300-1,000 rows, 2-4 members, single- and
# multi-label, on a loaded 2-core machine). Judged only when that fits what is left.
CROSS_FIT_FACTOR = 6.0
MAX_MEMBERS = 4


class SearchEnsemble:
    """The ensemble half of SearchRun's outcome (attributes are SearchRun's)."""

    ensembling = False  # set once the search concludes: the ensemble's reserve is spent then
    folder: Path
    folds: list[tuple[list[int], list[int]]]
    pool: TextData
    val: TextData
    config: Any
    best: dict[str, tuple[float, int, BaseClassifier]]

    def ensemble_reserve(self) -> float:
        """Seconds trials leave for the ensemble: none without two finished kinds to ensemble,
        when the search makes none, or once it is being tried."""
        if self.ensembling or not self.config.search_ensemble or len(self.best) < 2:
            return 0.0
        return min(ENSEMBLE_MAX_SECONDS, ENSEMBLE_SHARE * self.budget)

    # ---- each kept trial's out-of-fold probabilities -------------------------------------------

    def _oof_path(self, number: int) -> Path:
        return self.folder / f"{number}.oof.npy"

    def _oof_save(self, number: int, prob: np.ndarray) -> None:
        """Beside the trial's artifact, so a resumed search judges its ensemble alike."""
        path = self._oof_path(number)
        partial = path.with_name(f".{path.name}.partial")
        with open(partial, "wb") as out:
            np.save(out, np.asarray(prob, dtype=np.float64))
        os.replace(partial, path)

    def _oof_load(self, number: int) -> np.ndarray | None:
        path = self._oof_path(number)
        return np.load(path) if path.is_file() else None

    def _oof_rows(self) -> TextData:
        """The pooled rows in the order the folds scored them: the order of every trial's
        out-of-fold probabilities."""
        return self.pool.subset([i for _, rows in self.folds for i in rows])

    def _fold_scores(self, raw: np.ndarray, label_names: list[str]) -> list[float]:
        """A cross-validated trial's fold scores from its out-of-fold probabilities (the folds'
        rows in order, a column per label of `label_names`), each fold's rules tuned on the
        other folds (ensemble_score.fold_scores: a fold model's own metrics tune them on the
        rows that score it)."""
        rows = self._oof_rows()
        return ensemble_score.fold_scores(
            prob=raw, truth=encode_labels(rows.labels, list(label_names)),
            sizes=[len(scored) for _, scored in self.folds], multi_label=self.config.multi_label)

    def _out_of_fold(self, numbers: list[int], label_names: list[str],
                     ) -> tuple[TunedOn, np.ndarray] | None:
        """(the members' out-of-fold probabilities on the folds' rows, the winner's), the
        winner's number last in `numbers`; None unless every one of them has its own."""
        found = [self._oof_load(n) for n in numbers]
        rows = self._oof_rows()
        if any(p is None or len(p) != len(rows) for p in found):
            return None
        probs = [p for p in found if p is not None]
        tuned = TunedOn(texts=list(rows.texts), truth=encode_labels(rows.labels, label_names),
                        probs=probs[:-1])
        return tuned, probs[-1]

    # ---- the ensemble --------------------------------------------------------------------------

    def _ensemble_verdict(self, clf: BaseClassifier, described: dict[str, Any],
                          chosen: search_scoring.Scored, basis: str,
                          ) -> tuple[BaseClassifier, dict[str, Any]]:
        """The winner, or an ensemble of the best of each kind if it beats the winner out of
        fold; the verdict says which, and why."""
        self.ensembling = True  # the time kept for it is its own now
        if not self.config.search_ensemble or len(self.best) < 2 or self.stopped_reason:
            return clf, described
        if self.remaining() - self.reserve() <= ENSEMBLE_SECONDS:
            self.verdict += (f" No ensemble was tried: {max(0.0, self.remaining()):.0f} s were "
                             "left, too few to judge one.")
            return clf, described
        ranked = sorted(self.best.values(), key=lambda e: -self._scored(e[1]).on(basis))
        top = ranked[:MAX_MEMBERS]
        on_folds = self._members(ranked, chosen)
        # The kinds scored on validation only bring another kind of model (a fine-tuned
        # transformer) to an ensemble: left out of the one judged on the folds, they get their
        # own try on validation, with its stricter margin, when that one is not kept.
        for entries in [on_folds] + ([top] if on_folds != top else []):
            tried = self._ensemble(entries, clf, chosen)
            if tried is None:
                continue
            judged, ensemble, about = tried
            # Both out of fold on the same rows (ensemble_score): the winner's own validation
            # score has its thresholds tuned on the rows that score it.
            which = ("An ensemble of the best of each kind" if entries == top else
                     "An ensemble of " + ", ".join(m.model_type for _, _, m in entries))
            if judged.wins:
                self.verdict += (
                    f" {which} (macro-F1 {judged.ensemble:.3f} {judged.basis}) beat "
                    f"{chosen.model_type} scored the same way ({judged.alone:.3f}) by more "
                    f"than {judged.margin:.3f}, and is the model.")
                return ensemble, about
            self.verdict += (
                f" {which} was tried and not kept: macro-F1 {judged.ensemble:.3f} "
                f"{judged.basis}, against {judged.alone:.3f} for {chosen.model_type} scored "
                f"the same way; it needed more than {judged.margin:.3f} over it.")
        return clf, described

    def _members(self, ranked: list[tuple[float, int, BaseClassifier]],
                 chosen: search_scoring.Scored) -> list[tuple[float, int, BaseClassifier]]:
        """The best of each kind to ensemble, best first. When the winner has out-of-fold
        probabilities, the best MAX_MEMBERS that have their own too: a kind scored on validation
        only (a fine-tuned transformer) is left out, so that the rest are judged on the folds'
        rows rather than all of them on validation's few. Otherwise the best MAX_MEMBERS."""
        if self._oof_path(chosen.number).is_file():
            with_oof = {n for _, n, _ in ranked if self._oof_path(n).is_file()}
            scored = [entry for entry in ranked if entry[1] in with_oof]
            if len(scored) >= 2:
                left_out = [m.model_type for _, n, m in ranked[:MAX_MEMBERS]
                            if n not in with_oof]
                if left_out:
                    self.verdict += (f" {', '.join(left_out)} (scored on validation only) "
                                     "was left out of the first ensemble, so that the other "
                                     "kinds were judged on the rows of the folds.")
                return scored[:MAX_MEMBERS]
        return ranked[:MAX_MEMBERS]

    def _ensemble(self, entries: list[tuple[float, int, BaseClassifier]], alone: BaseClassifier,
                  chosen: search_scoring.Scored) -> tuple[Any, Any, dict] | None:
        """An ensemble of the kept models in `entries`, and its judgement against `alone` (the
        winner, trial `chosen`), both out of fold on the same rows; None when it was stopped,
        out of time, or there are too few rows to judge it."""
        from .ensemble import EnsembleClassifier
        from .types import TrainingStopped

        members = [m for _, _, m in entries]
        found = self._out_of_fold([n for _, n, _ in entries] + [chosen.number],
                                  list(alone.label_names))
        over = ensemble_score.FOLD_ROWS if found else ensemble_score.VALIDATION_ROWS
        labelled = len(found[1]) if found else sum(1 for row in self.val.labels if row)
        if labelled < ensemble_score.MIN_ROWS:
            self.verdict += (f" No ensemble was tried: {labelled} labelled {over} are too few "
                             f"to judge one out of fold (it needs {ensemble_score.MIN_ROWS}).")
            return None
        self._report(f"Trying an ensemble of {', '.join(m.model_type for m in members)}")
        start = time.perf_counter()

        def fits(seconds: float) -> bool:  # another fold as long as the last one
            return not self.should_stop() and self.remaining() - self.reserve() > seconds

        try:
            clf = EnsembleClassifier.from_members(
                members, val=self.val, config=self.config, should_stop=self.should_stop,
                out_of_fold=found[0] if found else None)
            tuned = clf.tuned_on
            assert tuned is not None  # from_members keeps the rows it was tuned on
            # The cross-fit tunes the weights once per fold, on four fifths of the rows.
            needed = CROSS_FIT_FACTOR * float(clf.timings.get("weights_seconds", 0.0))
            if needed > self.remaining() - self.reserve():
                return self._not_judged(members, f"judging it out of fold needs about "
                                        f"{needed:.0f} s, more than was left")
            judged = ensemble_score.ensemble_judge(
                probs=tuned.probs, truth=tuned.truth, multi_label=clf.multi_label, fits=fits,
                alone=found[1] if found else self._alone_probs(alone, members, tuned),
                over=over)
        except TrainingStopped:
            return self._not_judged(members, "the search was stopped, or ran out of time")
        if judged is None:  # the labelled rows were counted before: not reached
            return None
        in_sample = float(clf.metrics.get("macro_f1", 0.0))
        members_desc = clf.metrics.get("members") or []
        number = self._ensemble_trial(judged, in_sample=in_sample, members_desc=members_desc,
                                      alone_type=chosen.model_type,
                                      seconds=time.perf_counter() - start)
        self._report(f"Ensemble: macro-F1 {judged.ensemble:.3f} {judged.basis} "
                     f"({chosen.model_type} alone: {judged.alone:.3f})")
        return judged, clf, {"model_type": ENSEMBLE, "trial": number,
                             "validation_macro_f1": judged.ensemble, "params": {},
                             "basis": search_scoring.VALIDATION,
                             "out_of_fold": judged.basis,
                             "validation_split_macro_f1": in_sample,
                             "members": members_desc}

    def _not_judged(self, members: list[BaseClassifier], why: str) -> None:
        """Tried but not judged: the verdict and the progress say why."""
        self._report(f"Ensemble not judged: {why}")
        self.verdict += (f" An ensemble of {', '.join(m.model_type for m in members)} was "
                         f"not judged: {why}.")

    def _ensemble_trial(self, judged: Any, *, in_sample: float, members_desc: list[dict],
                        alone_type: str, seconds: float) -> int:
        """The ensemble as a completed trial of the study, valued out of fold; its number."""
        import optuna

        self.study.enqueue_trial({"model_type": ENSEMBLE})
        trial = self.study.ask()
        trial.suggest_categorical("model_type", self.choices)
        trial.set_user_attr("seconds", round(seconds, 2))
        tuned_where = ("tuned on the folds' rows, scored on validation"
                       if judged.over == ensemble_score.FOLD_ROWS
                       else "tuned and scored on all of validation")
        trial.set_user_attr("note", (
            f"{judged.basis}: weights and thresholds tuned on the other folds, against "
            f"{judged.alone:.3f} for {alone_type} scored the same way; {in_sample:.3f} "
            f"{tuned_where}; weights " + ", ".join(
                f"{m['model_type']} {m['weight']:.1f}" for m in members_desc)))
        # The validation column, like every trial's: the model scored on validation.
        trial.set_user_attr("validation_score", round(in_sample, 5))
        trial.set_user_attr("out_of_fold", {
            "rows": judged.rows, "folds": judged.folds, "over": judged.over,
            "ensemble": round(judged.ensemble, 5), "alone": round(judged.alone, 5),
            "alone_model_type": alone_type, "margin": round(judged.margin, 5),
            "seconds": round(judged.seconds, 2)})
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
