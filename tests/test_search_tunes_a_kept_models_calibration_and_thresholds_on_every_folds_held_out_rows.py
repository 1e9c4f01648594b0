"""A search's kept TF-IDF or embedding model takes its calibration and decision thresholds from
the out-of-fold probabilities of its trial's cross-validation (every labelled row of train and
validation, each scored by a fold model that never saw it), not from the validation split alone
(issue 39, "Calibration that tells the truth"); its validation metrics are recomputed with
them, and the rows they came from are named."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from classification.engine import search_scoring
from classification.engine.baselines import SklearnClassifier
from classification.engine.search import SearchClassifier
from classification.engine.types import TextData
from classification.ml_models import TrainConfig, create_classifier


def labels_of(train: TextData, val: TextData) -> list[str]:
    return sorted(set(train.label_space()) | set(val.label_space()))


def test_the_winners_rules_come_from_every_labelled_row_of_train_and_validation(
        demo_split, tmp_path: Path) -> None:
    train, val, _ = demo_split
    config = TrainConfig.from_dict({"time_budget_minutes": 0.25,
                                    "search_candidates": ["tfidf_logreg"]})
    config.label_names, config.multi_label = labels_of(train, val), True
    config.output_dir = str(tmp_path)
    search = SearchClassifier()
    search.fit(train, val, config, lambda event: None, lambda: False)

    pool = search_scoring.pooled(train, val)
    scored = sum(len(rows) for _, rows in search_scoring.folds(pool, seed=config.seed))
    assert scored > 2 * len(val)
    winner = search.winner
    assert winner.metrics["decision_rules_rows"] == scored
    assert winner.calibration.selection["rows"] == scored
    # the validation metrics are those of the rules the model now predicts with
    assert winner.metrics["micro_f1"] == winner.evaluate(val)["micro_f1"]


def test_the_rules_are_those_tuned_on_the_out_of_fold_probabilities(demo_split) -> None:
    train, val, test = demo_split
    config = TrainConfig()
    config.label_names, config.multi_label = labels_of(train, val), True
    pool = search_scoring.pooled(train, val)
    folds = search_scoring.folds(pool, seed=42)
    raws, rows = [], []

    def on_validation() -> SklearnClassifier:  # as a search's trials fit: rules from validation
        clf = create_classifier("tfidf_logreg")
        clf.rules_folds = 0
        return clf

    for fit_rows, scored_rows in folds:
        fold = on_validation()
        fold.fit(pool.subset(fit_rows), pool.subset(scored_rows), config, lambda e: None,
                 lambda: False)
        raws.append(fold.predict_proba_raw(pool.subset(scored_rows).texts))
        rows += scored_rows
    clf = on_validation()
    clf.fit(train, val, config, lambda e: None, lambda: False)
    tuned_on_val = list(clf.thresholds)

    clf.rules_out_of_fold(data=pool.subset(rows), raw=np.concatenate(raws), val=val)
    by_hand = on_validation()
    by_hand.fit(train, val, config, lambda e: None, lambda: False)
    by_hand._tune(pool.subset(rows), np.concatenate(raws))
    assert clf.thresholds == by_hand.thresholds
    assert clf.calibration.method == by_hand.calibration.method
    np.testing.assert_allclose(clf.predict_proba(test.texts), by_hand.predict_proba(test.texts))
    assert clf.metrics["decision_rules_rows"] == len(rows)
    # 180 held-out rows and 20 validation rows seldom agree on every label's threshold
    assert clf.thresholds != tuned_on_val
