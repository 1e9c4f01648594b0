"""Integrated Gradients on a tiny BERT that learned one rule: a planted word decides a label.

The model is built and trained here in a plain torch loop (seconds), then handed to the engine
as a TransformerClassifier, with its last layer pruned to [CLS] as a loaded artifact has it.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("captum")

FILLER = [
    "study", "patients", "trial", "results", "cohort", "dose", "risk", "outcome", "analysis",
    "group", "care", "data", "clinical", "review", "effect", "rate", "baseline", "follow",
    "therapy", "survival", "model", "index", "level", "signal", "measure", "sample", "visit",
]
PLANTED = {"alpha": "zorblax", "beta": "quenty"}
LABELS = ["alpha", "beta"]


def _texts(n: int, seed: int) -> tuple[list[str], list[list[int]]]:
    rng = random.Random(seed)
    texts, targets = [], []
    for _ in range(n):
        words = [rng.choice(FILLER) for _ in range(rng.randint(8, 16))]
        row = []
        for label in LABELS:
            present = rng.random() < 0.5
            if present:
                words.insert(rng.randrange(len(words) + 1), PLANTED[label])
            row.append(int(present))
        texts.append(" ".join(words))
        targets.append(row)
    return texts, targets


@pytest.fixture(scope="module")
def planted_classifier(tmp_path_factory: pytest.TempPathFactory) -> Any:
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    from classification.engine.cls_head import prune_last_layer_to_cls
    from classification.ml_models import TransformerClassifier

    folder: Path = tmp_path_factory.mktemp("planted-bert")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *FILLER, *PLANTED.values()]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tokenizer = BertTokenizerFast(vocab=str(folder / "vocab.txt"), do_lower_case=True)
    torch.manual_seed(0)
    model = BertForSequenceClassification(BertConfig(
        vocab_size=len(vocab), hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=128, max_position_embeddings=64, num_labels=len(LABELS),
        problem_type="multi_label_classification", hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    ))
    texts, targets = _texts(400, seed=1)
    # Measured over five seeds: this size and rate learned the rule every time (about 3 s);
    # hidden 32 or a rate of 3e-3 got stuck on one label for some seeds.
    optimiser = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model.train()
    for epoch in range(10):
        order = list(range(len(texts)))
        random.Random(epoch).shuffle(order)
        for start in range(0, len(order), 32):
            batch = order[start:start + 32]
            inputs = tokenizer([texts[i] for i in batch], padding=True, return_tensors="pt")
            labels = torch.tensor([targets[i] for i in batch], dtype=torch.float32)
            loss = model(**inputs, labels=labels).loss
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
    model.eval()
    prune_last_layer_to_cls(model)

    clf = TransformerClassifier("custom")
    clf.model, clf.tokenizer, clf.max_length = model, tokenizer, 48
    clf.label_names, clf.multi_label, clf.thresholds = list(LABELS), True, [0.5, 0.5]
    held_out, truth = _texts(60, seed=2)
    # Probabilities, not predict()'s labels: predict names at least one label per text.
    predicted = (clf.predict_proba(held_out) > 0.5).astype(int).tolist()
    accuracy = sum(p == t for p, t in zip(predicted, truth, strict=True)) / len(truth)
    assert accuracy >= 0.95, f"the tiny BERT did not learn the rule ({accuracy:.2f})"
    return clf


def test_the_top_word_for_each_label_is_its_planted_token(planted_classifier: Any) -> None:
    from classification.ml_models import explain

    text = "cohort zorblax outcome risk therapy quenty survival data"
    result = explain(planted_classifier, text, labels=LABELS, top_k=3)
    assert result["method"] == "integrated_gradients"
    by_label = {row["label"]: row for row in result["explanations"]}
    for label, token in PLANTED.items():
        row = by_label[label]
        assert row["predicted"] is True
        assert row["positive"][0]["term"] == token, row["positive"]
        top = max(row["spans"], key=lambda span: span[2])
        assert text[top[0]:top[1]] == token


def test_attributions_and_the_baseline_add_up_to_the_score(planted_classifier: Any) -> None:
    from classification.ml_models import explain

    text = "zorblax trial results dose group"
    row = explain(planted_classifier, text, labels=["alpha"])["explanations"][0]
    total = sum(weight for _, _, weight in row["spans"]) + row["base_score"]
    # Completeness of Integrated Gradients, up to the integral's own reported error.
    assert total == pytest.approx(row["score"], abs=abs(row["delta"]) + 1e-4)
    assert abs(row["delta"]) < 0.05 * max(1.0, abs(row["score"] - row["base_score"]))
    assert row["steps"] >= 8


def test_default_labels_are_the_predicted_ones_and_truncation_is_reported(
    planted_classifier: Any,
) -> None:
    from classification.ml_models import explain

    short = explain(planted_classifier, "quenty cohort review")
    assert [row["label"] for row in short["explanations"]] == ["beta"]
    assert short["truncated_at"] is None
    long_text = " ".join(["cohort"] * 80 + ["zorblax"])
    cut = explain(planted_classifier, long_text, labels=["alpha"])
    assert cut["truncated_at"] is not None
    assert cut["truncated_at"] < len(long_text)
    assert all(end <= cut["truncated_at"] for _, end, _ in cut["explanations"][0]["spans"])
    with pytest.raises(ValueError, match="Unknown label"):
        explain(planted_classifier, "cohort", labels=["gamma"])


def test_frozen_encoder_logreg_scores_match_its_own_features(
    planted_classifier: Any, tmp_path: Path
) -> None:
    """minilm_embed_logreg's path, on the tiny encoder: the differentiable re-computation of
    mean pooling + logistic regression gives the head's own decision score."""
    import dataclasses

    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.multiclass import OneVsRestClassifier
    from transformers import BertModel

    from classification.engine.device import plan_device
    from classification.ml_models import EmbeddingLogRegClassifier, TrainConfig, explain

    clf = EmbeddingLogRegClassifier("minilm_embed_logreg")
    # A whole encoder: the classifier's own has its last layer cut down to the [CLS] row.
    trained = planted_classifier.model
    encoder = BertModel(trained.config, add_pooling_layer=False).eval()
    encoder.load_state_dict(trained.base_model.state_dict(), strict=False)
    # fp32 on every machine: on a CPU with native bf16 the plan encodes under bf16 autocast,
    # which moves the head's score by ~4e-4, more than the tolerance this identity is held to.
    plan = dataclasses.replace(plan_device(), dtype="float32")
    clf._encoder = (encoder, planted_classifier.tokenizer, plan)
    clf.config = TrainConfig(max_length=48)
    texts, targets = _texts(120, seed=3)
    clf.head = OneVsRestClassifier(LogisticRegression(max_iter=500)).fit(
        clf._features(texts), np.array(targets))
    clf.label_names, clf.multi_label, clf.thresholds = list(LABELS), True, [0.5, 0.5]
    text = "zorblax trial cohort"
    result = explain(clf, text, labels=LABELS)
    assert result["method"] == "integrated_gradients"
    features = clf._features([text])
    for j, row in enumerate(result["explanations"]):
        expected = clf.head.estimators_[j].decision_function(features)[0]
        assert row["score"] == pytest.approx(expected, abs=1e-4)
        total = sum(weight for _, _, weight in row["spans"]) + row["base_score"]
        assert total == pytest.approx(row["score"], abs=abs(row["delta"]) + 1e-4)
