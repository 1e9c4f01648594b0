"""Every model kind in the registry that a search may tune (the kinds the New model form
offers) has its space in engine/search_space.py: its first trial's settings and a point Optuna
draws from its space. A kind added to the registry without one fails here, and a search asked to
tune it leaves it out with a message naming what to add where, instead of a KeyError."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import optuna
import pytest

from classification.engine import search_space
from classification.engine.registry import REGISTRY, ModelSpec
from classification.engine.search import SearchClassifier
from classification.ml_models import TrainConfig

# What a search may tune: the kinds the New model form offers (an ensemble and a search are made
# from trained models and by the search itself).
TUNABLE = [spec for spec in REGISTRY.values() if spec.offered]
HEAD_KINDS = [spec for spec in TUNABLE if spec.kind in ("baseline", "embedding")]


def test_the_registry_has_baseline_kinds_to_check() -> None:
    assert {"tfidf_logreg", "tfidf_svm", "minilm_embed_logreg"} <= {s.key for s in HEAD_KINDS}


@pytest.mark.parametrize("spec", TUNABLE, ids=[spec.key for spec in TUNABLE])
def test_every_registered_kind_has_defaults_and_a_space_optuna_draws_from(
        spec: ModelSpec) -> None:
    assert search_space.missing_space(spec) == ""
    first = search_space.defaults(spec)
    trial = optuna.create_study().ask()
    drawn = search_space.suggest(trial, spec)
    assert set(drawn) == set(first)
    assert set(search_space.unprefixed(trial.params)) == set(first)


def new_baseline_kind() -> ModelSpec:
    return dataclasses.replace(REGISTRY["tfidf_logreg"], key="tfidf_new", label="TF-IDF, new")


def test_a_baseline_kind_without_a_space_is_refused_naming_the_file_to_add_it_to() -> None:
    spec = new_baseline_kind()
    with pytest.raises(search_space.NoSearchSpaceError) as refused:
        search_space.defaults(spec)
    assert str(refused.value) == (
        "tfidf_new has no search space: add it to HEAD in classification/engine/search_space.py")
    with pytest.raises(search_space.NoSearchSpaceError, match="tfidf_new"):
        search_space.suggest(optuna.create_study().ask(), spec)


def test_a_kind_of_an_unknown_family_is_refused_too() -> None:
    spec = dataclasses.replace(REGISTRY["tfidf_logreg"], key="gbm", kind="boosted")
    assert "not 'boosted'" in search_space.missing_space(spec)


def test_a_search_leaves_a_kind_without_a_space_out_and_says_why(
        demo_split, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(REGISTRY, "tfidf_new", new_baseline_kind())
    train, val, _ = demo_split
    config = TrainConfig.from_dict({"time_budget_minutes": 0.1,
                                    "search_candidates": ["tfidf_new", "tfidf_logreg"]})
    config.label_names = sorted(set(train.label_space()) | set(val.label_space()))
    config.multi_label, config.output_dir = True, str(tmp_path)

    summary = SearchClassifier().fit(train, val, config, lambda event: None,
                                     lambda: False)["search"]

    assert summary["winner"]["model_type"] == "tfidf_logreg"
    assert summary["not_tried"]["tfidf_new"] == (
        "tfidf_new has no search space: add it to HEAD in classification/engine/search_space.py")
