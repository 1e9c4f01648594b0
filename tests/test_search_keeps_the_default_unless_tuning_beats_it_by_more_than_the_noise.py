"""A tuned winner replaces the best untuned default only when it beats it by more than the
noise: a paired comparison over the same cross-validation folds (or, without folds, one
standard error of a validation score). The folds are stratified, the same for every trial of a
search, and never mix a row into its own fit."""

from __future__ import annotations

from classification.engine.search_scoring import Scored, folds, pooled, verdict
from classification.engine.types import TextData


def test_a_gain_inside_the_fold_noise_keeps_the_default_and_says_so() -> None:
    default = Scored(0, "tfidf_svm", 0.700, (0.70, 0.66, 0.74, 0.68, 0.72))
    lucky = Scored(7, "tfidf_logreg", 0.704, (0.74, 0.62, 0.76, 0.66, 0.74))
    keep, sentence = verdict(lucky, default, val_rows=200)
    assert not keep
    assert sentence.startswith("Kept the untuned default tfidf_svm (macro-F1 0.700)")
    assert "not more than the noise" in sentence
    assert "paired differences over 5" in sentence


def test_a_steady_gain_over_every_fold_replaces_the_default() -> None:
    default = Scored(0, "tfidf_svm", 0.700, (0.70, 0.66, 0.74, 0.68, 0.72))
    better = Scored(9, "tfidf_svm", 0.720, (0.72, 0.68, 0.76, 0.70, 0.74))
    keep, sentence = verdict(better, default, val_rows=200)
    assert keep
    assert "beat the best untuned default, tfidf_svm (0.700), by 0.020" in sentence


def test_without_folds_the_noise_is_a_validation_scores_standard_error() -> None:
    default = Scored(0, "minilm", 0.80)
    small_gain = Scored(3, "minilm", 0.81)
    assert not verdict(small_gain, default, val_rows=100)[0]  # SE 0.04 on 100 rows
    assert verdict(small_gain, default, val_rows=100_000)[0]
    assert verdict(default, default, val_rows=10)[1].startswith("The winner is minilm at its")


def test_folds_are_stratified_disjoint_and_repeatable() -> None:
    labels = [["a"]] * 40 + [["b"]] * 15 + [["c", "a"]] * 5
    data = pooled(TextData([f"t{i}" for i in range(40)], labels[:40]),
                  TextData([f"v{i}" for i in range(20)], labels[40:]))
    split = folds(data, seed=42)
    assert split == folds(data, seed=42)
    assert len(split) == 5
    for fit_rows, scored_rows in split:
        assert not set(fit_rows) & set(scored_rows)
        assert sorted(fit_rows + scored_rows) == list(range(60))
        assert sum(1 for i in scored_rows if "c" in data.labels[i]) == 1  # the rare label
    assert sorted(i for _, scored in split for i in scored) == list(range(60))
    # A label too rare for two folds: no cross-validation, the validation split scores.
    assert folds(TextData(["x"] * 20, [["a"]] * 19 + [["b"]]), seed=1) == []
