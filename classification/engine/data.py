"""Reading the challenge CSV and making seeded multi-label-stratified splits (scripts, tests)."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from .metrics import encode_labels
from .types import TextData, article_text


def read_challenge_csv(path: str | Path, limit: int | None = None) -> TextData:
    """title;abstract;group with a UTF-8 BOM, groups joined with '|'."""
    texts: list[str] = []
    labels: list[list[str]] = []
    with open(path, encoding="utf-8-sig", newline="") as fh:
        for row in csv.DictReader(fh, delimiter=";"):
            title = (row.get("title") or "").strip()
            abstract = (row.get("abstract") or "").strip()
            text = article_text(title, abstract)
            if not text:
                continue
            texts.append(text)
            labels.append([g.strip() for g in (row.get("group") or "").split("|") if g.strip()])
            if limit is not None and len(texts) >= limit:
                break
    return TextData(texts, labels)


def stratified_split(
    data: TextData, fractions: tuple[float, float, float] = (0.8, 0.1, 0.1), seed: int = 42
) -> tuple[TextData, TextData, TextData]:
    """Iterative stratification (iterstrat) keeps every label's share in each split."""
    from iterstrat.ml_stratifiers import MultilabelStratifiedShuffleSplit

    label_names = data.label_space()
    y = encode_labels(data.labels, label_names)
    idx = np.arange(len(data))
    _train_frac, val_frac, test_frac = fractions
    first = MultilabelStratifiedShuffleSplit(
        n_splits=1, test_size=val_frac + test_frac, random_state=seed
    )
    train_idx, rest_idx = next(first.split(idx, y))
    second = MultilabelStratifiedShuffleSplit(
        n_splits=1, test_size=test_frac / (val_frac + test_frac), random_state=seed
    )
    val_rel, test_rel = next(second.split(rest_idx, y[rest_idx]))
    return (
        data.subset(sorted(train_idx.tolist())),
        data.subset(sorted(rest_idx[val_rel].tolist())),
        data.subset(sorted(rest_idx[test_rel].tolist())),
    )
