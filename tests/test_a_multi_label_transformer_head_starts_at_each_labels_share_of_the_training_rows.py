"""A fresh multi-label head predicts each label's base rate, not 0.5 for every label.

Trained with a step too small to move anything, the tiny BERT's probabilities are where fit
started them: a label on a few rows in a hundred starts near that share, so a short run need
not spend its steps unlearning a 0.5 that flags it on every article.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np

from classification.engine.types import TextData
from classification.ml_models import TrainConfig, create_classifier
from tests.tinybert import _demo_words

MARKERS = {"cardiac": "heart", "neuro": "brain", "rare": "liver"}
SHARES = {"cardiac": 0.5, "neuro": 0.4, "rare": 0.06}


def synthetic(rows: int, seed: int) -> TextData:
    """Texts of common words; each label's marker word is in the rows that carry it."""
    rng = random.Random(seed)
    filler = [w for w in _demo_words()[50:400] if w not in MARKERS.values()]
    texts, labels = [], []
    for _ in range(rows):
        words, carried = rng.sample(filler, 30), []
        for name, share in SHARES.items():
            if rng.random() < share:
                words.insert(rng.randrange(len(words)), MARKERS[name])
                carried.append(name)
        if not carried:
            carried = ["cardiac"]
            words.insert(rng.randrange(len(words)), MARKERS["cardiac"])
        texts.append(" ".join(words))
        labels.append(carried)
    return TextData(texts, labels)


def test_an_untrained_head_gives_each_label_about_its_training_share(tiny_bert_dir: Path) -> None:
    train, val = synthetic(200, seed=1), synthetic(60, seed=2)
    config = TrainConfig(model_path=str(tiny_bert_dir), epochs=1, batch_size=16,
                         learning_rate=1e-7, early_stopping_patience=0, max_length=64,
                         class_weighted_loss=False, calibration="none")
    config.label_names, config.multi_label = list(SHARES), True
    clf = create_classifier("custom")
    clf.fit(train, val, config, lambda e: None, lambda: False)

    prob = clf.predict_proba_raw(val.texts).mean(axis=0)
    truth = np.array([[name in row for name in SHARES] for row in train.labels]).mean(axis=0)
    assert np.abs(prob - truth).max() < 0.05, (prob, truth)
    assert prob[list(SHARES).index("rare")] < 0.15
