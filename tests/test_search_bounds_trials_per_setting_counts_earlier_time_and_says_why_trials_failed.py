"""The search engine on its own: a candidate gets at most TRIALS_PER_SETTING trials per tuned
setting (then the search ends, saying why, instead of fitting validation noise for the rest of
its budget); TF-IDF trials are cross-validated; time already spent before this run (earlier
attempts, the job's start-up) counts against the budget; a trial a killed attempt left running
shows why it failed. Its trials fit each fold's TF-IDF once per n-gram setting and reuse it
(feature_memo.py), and say which did."""

from __future__ import annotations

import time
from pathlib import Path

import optuna

from classification.engine.search import SearchClassifier
from classification.engine.search_space import TRIALS_PER_SETTING
from classification.ml_models import TrainConfig


def search_config(folder: Path, minutes: float, labels: list[str]) -> TrainConfig:
    config = TrainConfig.from_dict({"time_budget_minutes": minutes,
                                    "search_candidates": ["tfidf_logreg"]})
    config.label_names, config.multi_label = labels, True
    config.output_dir = str(folder)
    return config


def study_at(folder: Path) -> optuna.Study:
    return optuna.load_study(study_name="search", storage=f"sqlite:///{folder / 'search.sqlite3'}")


def test_a_candidate_gets_a_bounded_number_of_cross_validated_trials(demo_split,
                                                                     tmp_path) -> None:
    train, val, _ = demo_split
    labels = sorted(set(train.label_space()) | set(val.label_space()))
    search_clf = SearchClassifier()
    metrics = search_clf.fit(train, val, search_config(tmp_path, 30, labels),
                             lambda event: None, lambda: False)
    search = metrics["search"]
    trials = study_at(tmp_path).trials
    assert len(trials) == 2 * TRIALS_PER_SETTING  # C and the n-grams: two settings tuned
    assert search["ended"].startswith("Every candidate had its trials")
    assert search["not_tried"]["tfidf_logreg"].startswith(f"it had its {2 * TRIALS_PER_SETTING}")
    assert search["spent_seconds"] < 30 * 60 / 4  # it ended long before its budget
    assert all(len(t.user_attrs["fold_scores"]) == 5 for t in trials)
    assert search["scoring"].startswith("5-fold cross-validation on train and validation")
    assert search["verdict"]

    settings = {t.params["tfidf_logreg:ngram_max"] for t in trials}
    fitted = sum(t.user_attrs["features_fitted"] for t in trials)
    reused = sum(t.user_attrs["features_reused"] for t in trials)
    # Five folds per n-gram setting, and each kept model's own fit on train: never per trial.
    assert fitted <= 5 * len(settings) + sum(1 for t in trials if t.value is not None)
    assert fitted + reused >= 5 * len(trials)
    assert reused >= 5 * (len(trials) - 2 * len(settings))
    assert any("TF-IDF features reused" in row["note"] for row in search["trial_rows"])
    # Once the search is over, its memo lets go of the features.
    [memo] = {id(m.feature_memo): m.feature_memo for m in search_clf.kept.values()}.values()
    assert memo.held == 0
    assert memo.hits >= reused


def test_time_spent_before_the_run_counts_and_a_left_running_trial_says_why_it_failed(
        demo_split, tmp_path) -> None:
    train, val, _ = demo_split
    labels = sorted(set(train.label_space()) | set(val.label_space()))
    config = search_config(tmp_path, 1.0, labels)
    study = optuna.create_study(study_name="search", direction="maximize",
                                storage=f"sqlite:///{tmp_path / 'search.sqlite3'}")
    study.ask()  # an earlier attempt was killed during this trial
    # 50 of the 60 seconds went before this run (earlier attempts and the job's start-up).
    config.search_clock_start = time.time() - 50
    events: list[dict] = []
    started = time.monotonic()
    metrics = SearchClassifier().fit(train, val, config, events.append, lambda: False)
    assert time.monotonic() - started < 10 + 15  # the 10 s left, and one trial over at most
    assert metrics["search"]["spent_seconds"] >= 50

    board = [e for e in events if "leaderboard" in e][-1]["leaderboard"]
    [failed] = [row for row in board if row["number"] == 0]
    assert failed["state"] == "fail"
    assert failed["note"].startswith("failed: the attempt running it ended before it finished")
    assert any(row["note"].startswith("usual settings") for row in board)
