"""A search reads the deployment's embedding cache before its first estimate (issue 39): a
second search over the same texts embeds nothing, says how many texts it found embedded, and
records per trial the seconds it spent embedding; an embedding trial's estimate counts only the
head's time and the texts still to embed."""

from __future__ import annotations

from pathlib import Path

import optuna
import pytest

from classification.engine import search_estimates
from classification.engine.search import SearchClassifier
from classification.engine.search_space import defaults, prefixed
from classification.ml_models import TrainConfig, get_spec

KIND = "minilm_embed_logreg"


def search_config(folder: Path, encoder: Path, cache: Path, labels: list[str]) -> TrainConfig:
    config = TrainConfig.from_dict({"time_budget_minutes": 0.3, "search_candidates": [KIND]})
    config.label_names, config.multi_label = labels, True
    config.output_dir, config.model_path = str(folder), str(encoder)
    config.embedding_cache_dir, config.max_length = str(cache), 64
    return config


def trials_at(folder: Path) -> list[optuna.trial.FrozenTrial]:
    study = optuna.load_study(study_name="search",
                              storage=f"sqlite:///{folder / 'search.sqlite3'}")
    return [t for t in study.trials if t.params.get("model_type") == KIND]


def test_a_second_search_finds_its_texts_embedded_and_spends_nothing_embedding(
        demo_split, tiny_bert_dir: Path, tmp_path: Path) -> None:
    train, val, _ = demo_split
    labels = sorted(set(train.label_space()) | set(val.label_space()))
    cache = tmp_path / "cache"
    first_events: list[dict] = []
    SearchClassifier().fit(train, val, search_config(tmp_path / "a", tiny_bert_dir, cache,
                                                     labels), first_events.append, lambda: False)
    first = trials_at(tmp_path / "a")
    assert first[0].user_attrs["embed_seconds"] > 0
    assert all(t.user_attrs["embed_seconds"] == 0 for t in first[1:])  # the shared dict's

    events: list[dict] = []
    SearchClassifier().fit(train, val, search_config(tmp_path / "b", tiny_bert_dir, cache,
                                                     labels), events.append, lambda: False)
    second = trials_at(tmp_path / "b")
    assert second
    assert all(t.user_attrs["embed_seconds"] == 0 for t in second)
    said = [str(e.get("message")) for e in events]
    assert any("already embedded (embedding cache)" in m for m in said), said
    assert not any("already embedded" in str(e.get("message")) for e in first_events)


def measured_trial(seconds: float, embed_seconds: float) -> optuna.trial.FrozenTrial:
    spec = get_spec(KIND)
    params = {"model_type": KIND, **prefixed(spec, defaults(spec))}
    distributions = {name: optuna.distributions.CategoricalDistribution([value])
                     for name, value in params.items()}
    return optuna.trial.create_trial(params=params, distributions=distributions, value=0.5,
                                     user_attrs={"seconds": seconds,
                                                 "embed_seconds": embed_seconds})


@pytest.mark.parametrize(("uncached", "expected"), [(0, 10.0), (100, 13.0)])
def test_an_embedding_trials_estimate_is_its_head_plus_the_texts_left_to_embed(
        uncached: int, expected: float) -> None:
    spec = get_spec(KIND)
    texts = [f"text {i}" for i in range(300)]
    cache = {("embeddings", 64): {t: None for t in texts[uncached:]},
             "embed_seconds_per_text": 0.03}
    estimate = search_estimates.trial_seconds(
        spec=spec, settings=defaults(spec), trials=[measured_trial(100.0, 90.0)],
        device_plan=None, rows=search_estimates.TrialRows(train=300, validation=0), cache=cache,
        texts=texts)
    assert estimate == pytest.approx(expected)
