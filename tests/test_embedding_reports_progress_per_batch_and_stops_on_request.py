"""MiniLM embeddings report progress batch by batch while they are computed (a minute of them
on a loaded CPU is steady progress to the watchdog, not one long silence), and a stop asked
for meanwhile ends the fit within a batch."""

from __future__ import annotations

import pytest

from classification.engine import baselines
from classification.ml_models import TrainConfig, TrainingStopped, create_classifier


def config_for(labels: list[str]) -> TrainConfig:
    config = TrainConfig(max_length=64)
    config.label_names, config.multi_label = labels, True
    return config


def test_embedding_reports_each_batch_and_a_stop_ends_it(demo_split, monkeypatch) -> None:
    monkeypatch.setattr(baselines, "EMBED_REPORT_SECONDS", 0.0)  # every batch, for the count
    train, val, _ = demo_split
    labels = sorted(set(train.label_space()) | set(val.label_space()))
    events: list[dict] = []
    clf = create_classifier("minilm_embed_logreg")
    clf.fit(train, val, config_for(labels), events.append, lambda: False)
    said = [e["message"] for e in events if "embedding:" in str(e.get("message"))]
    assert len(said) >= 3, said
    assert said[0] != said[-1]
    assert f"embedding: {len(train)} of {len(train)} texts" in said

    asked = {"batches": 0}

    def count(event: dict) -> None:
        if "embedding:" in str(event.get("message")):
            asked["batches"] += 1

    with pytest.raises(TrainingStopped):
        create_classifier("minilm_embed_logreg").fit(
            train, val, config_for(labels), count, lambda: asked["batches"] >= 1)
    assert asked["batches"] <= 2
