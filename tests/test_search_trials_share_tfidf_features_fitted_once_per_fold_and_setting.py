"""A search's TF-IDF trials fit each fold's vectorizer once per n-gram setting and share it:
a trial that only changes C reuses the features an earlier trial fitted on the same texts and
scores exactly what a fresh fit scores, and the memo stays bounded. (The search's own count of
fitted and reused features is asserted on its bounded run, in
test_search_bounds_trials_per_setting_counts_earlier_time_and_says_why_trials_failed.py.)"""

from __future__ import annotations

import numpy as np

from classification.engine.baselines import SklearnClassifier
from classification.engine.feature_memo import FeatureMemo, texts_fingerprint
from classification.ml_models import TrainConfig


def config_for(labels: list[str], **options) -> TrainConfig:
    config = TrainConfig.from_dict(options)
    config.label_names, config.multi_label = labels, True
    return config


def fitted(train, val, labels, memo: FeatureMemo | None, c: float) -> SklearnClassifier:
    clf = SklearnClassifier("tfidf_logreg")
    clf.rules_folds = 0
    clf.feature_memo = memo
    clf.fit(train, val, config_for(labels, regularization_c=c), lambda e: None, lambda: False)
    return clf


def test_a_second_fit_on_the_same_texts_reuses_the_vectorizer_and_predicts_what_a_fresh_fit_does(
        demo_split) -> None:
    train, val, test = demo_split
    labels = sorted(set(train.label_space()) | set(val.label_space()))
    memo = FeatureMemo()
    first = fitted(train, val, labels, memo, c=10.0)
    assert (memo.misses, memo.hits) == (1, 0)
    second = fitted(train, val, labels, memo, c=1.0)
    assert (memo.misses, memo.hits) == (1, 1)
    assert second.vectorizer is first.vectorizer

    fresh = fitted(train, val, labels, None, c=1.0)
    assert fresh.vectorizer is not first.vectorizer
    np.testing.assert_allclose(second.predict_proba_raw(test.texts),
                               fresh.predict_proba_raw(test.texts), rtol=1e-6, atol=1e-9)

    # Other texts are other features: one text changed is a miss.
    other = train.subset(list(range(len(train))))
    other.texts[0] = other.texts[0] + " changed"
    fitted(other, val, labels, memo, c=1.0)
    assert (memo.misses, memo.hits) == (2, 1)


def test_the_memo_keeps_its_newest_entries_and_an_evicted_transform_is_still_right() -> None:
    memo = FeatureMemo(max_bytes=2_000)  # two of the 800-byte matrices below
    calls: list[str] = []

    def fit_of(name: str):
        def fit():
            calls.append(name)
            return name, np.zeros(100)
        return fit

    keys = {name: memo.fitted(settings=("s",), texts=[name], fit=fit_of(name))[2]
            for name in ("a", "bb", "ccc")}
    assert calls == ["a", "bb", "ccc"]
    assert memo.held == 1_600
    memo.fitted(settings=("s",), texts=["a"], fit=fit_of("a"))  # "a" was evicted: fitted again
    assert calls == ["a", "bb", "ccc", "a"]
    memo.fitted(settings=("s",), texts=["ccc"], fit=fit_of("ccc"))  # still kept
    assert calls[-1] == "a"
    # "bb" is gone now: its transform is computed each time, never kept.
    counted: list[int] = []
    for _ in range(2):
        memo.transformed(key=keys["bb"], texts=["x"],
                         transform=lambda: counted.append(1) or np.zeros(1))
    assert counted == [1, 1]
    for _ in range(2):
        memo.transformed(key=keys["ccc"], texts=["x"],
                         transform=lambda: counted.append(1) or np.zeros(1))
    assert counted == [1, 1, 1]
    assert memo.held == 1_608
    memo.clear()  # a search's end lets go of everything
    assert memo.held == 0
    memo.fitted(settings=("s",), texts=["ccc"], fit=fit_of("ccc"))
    assert calls[-1] == "ccc"
    assert texts_fingerprint(["a", "b"]) != texts_fingerprint(["ab"])
    assert texts_fingerprint(["a\x00", "b"]) != texts_fingerprint(["a", "\x00b"])
