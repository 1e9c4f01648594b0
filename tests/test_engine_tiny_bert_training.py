"""Fine-tuning a real (tiny) BERT through the Trainer on the demo slice."""

from __future__ import annotations

import json

import pytest


def test_tiny_bert_training_loss_falls_on_the_demo_slice(trained_tiny_bert: tuple) -> None:
    _, events = trained_tiny_bert
    losses = [e["loss"] for e in events if e["phase"] == "training" and "learning_rate" in e]
    assert len(losses) >= 4
    first, last = sum(losses[:2]) / 2, sum(losses[-2:]) / 2
    assert last < first - 0.03


def test_training_reports_every_phase_with_step_counts(trained_tiny_bert: tuple) -> None:
    _, events = trained_tiny_bert
    phases = [e["phase"] for e in events]
    for phase in ("loading_model", "tokenizing", "training", "evaluating"):
        assert phase in phases
    steps = [e for e in events if e["phase"] == "training" and "total_steps" in e and e.get("step")]
    assert steps[-1]["step"] == steps[-1]["total_steps"]
    evals = [e for e in events if e["phase"] == "evaluating" and "metrics" in e]
    assert len(evals) == 8  # one evaluation per epoch
    assert "macro_f1" in evals[0]["metrics"]
    json.dumps(events)


def test_tiny_bert_predictions_return_labels_and_a_probability_per_label(
    trained_tiny_bert: tuple, demo_split: tuple
) -> None:
    clf, _ = trained_tiny_bert
    _, _, test = demo_split
    predictions = clf.predict(test.texts[:5])
    assert len(predictions) == 5
    for prediction in predictions:
        assert set(prediction["probabilities"]) == set(clf.label_names)
        assert all(0.0 <= p <= 1.0 for p in prediction["probabilities"].values())
        assert prediction["labels"]
        assert set(prediction["labels"]) <= set(clf.label_names)


def test_tiny_bert_evaluation_carries_the_contracted_metric_keys(
    trained_tiny_bert: tuple, demo_split: tuple
) -> None:
    clf, _ = trained_tiny_bert
    metrics = clf.evaluate(demo_split[2])
    for key in (
        "micro_f1",
        "macro_f1",
        "n",
        "subset_accuracy",
        "per_label",
        "confusion",
        "confident_mistakes",
    ):
        assert key in metrics
    assert metrics["n"] == len(demo_split[2])
    assert clf.thresholds == pytest.approx(clf.thresholds)  # plain floats, one per label
    assert len(clf.thresholds) == len(clf.label_names)


def test_cpu_training_turns_off_attention_dropout_only(trained_tiny_bert: tuple) -> None:
    # Attention dropout keeps SDPA off its fused CPU kernel; hidden dropout must stay.
    clf, _ = trained_tiny_bert
    assert clf.device_plan.device == "cpu"
    assert clf.model.config.attention_probs_dropout_prob == 0.0
    assert clf.model.config.hidden_dropout_prob == pytest.approx(0.1)
