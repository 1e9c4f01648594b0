"""A two-minute search with an ensemble, run as the search tests run it, and its ensemble trial."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import optuna

from classification.engine.search import SearchClassifier
from classification.engine.types import TextData
from classification.ml_models import TrainConfig


def ensemble_search(*, train: TextData, val: TextData, candidates: list[str],
                    folder: Path, **settings: Any) -> tuple[dict[str, Any], Any]:
    """(the search's metrics, its ensemble trial) for a multi-label search of `candidates`
    with an ensemble (and any other `settings` of its config), its study and trials under
    `folder`. Two minutes leave the ensemble its time on a loaded machine too."""
    labels = sorted(set(train.label_space()) | set(val.label_space()))
    config = TrainConfig.from_dict({"time_budget_minutes": 2, "search_ensemble": True,
                                    "search_candidates": candidates, **settings})
    config.label_names, config.multi_label = labels, True
    config.output_dir = str(folder)
    metrics = SearchClassifier().fit(train, val, config, lambda event: None, lambda: False)
    trials = optuna.load_study(study_name="search",
                               storage=f"sqlite:///{folder / 'search.sqlite3'}").trials
    # A second ensemble, with kinds scored on validation only, is tried when the first is not
    # kept: the first is the one every search tries.
    ensemble = min((t for t in trials if t.params.get("model_type") == "ensemble"),
                   key=lambda t: t.number)
    return metrics, ensemble
