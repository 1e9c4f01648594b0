"""Evaluation metrics as plain JSON-able dicts (floats, ints, lists), for both task shapes."""

from __future__ import annotations

from typing import Any

import numpy as np

MISTAKE_TEXT_CHARS = 500
N_MISTAKES = 20


def _f(x: Any) -> float:
    return float(np.nan_to_num(float(x)))


def encode_labels(labels: list[list[str]], label_names: list[str]) -> np.ndarray:
    """Indicator matrix (n, L); labels outside the label space are ignored."""
    index = {name: i for i, name in enumerate(label_names)}
    y = np.zeros((len(labels), len(label_names)), dtype=np.int64)
    for row, names in enumerate(labels):
        for name in names:
            if name in index:
                y[row, index[name]] = 1
    return y


def roc_auc_macro(y_true: np.ndarray, y_prob: np.ndarray) -> float | None:
    """Macro ROC-AUC over labels that have both classes present; None when none has."""
    from sklearn.metrics import roc_auc_score

    scores = []
    for j in range(y_true.shape[1]):
        column = y_true[:, j]
        if column.min() == column.max():
            continue  # AUC is undefined for a label with a single class in this split
        scores.append(roc_auc_score(column, y_prob[:, j]))
    return float(np.mean(scores)) if scores else None


def _per_label(y_true: np.ndarray, y_pred: np.ndarray, label_names: list[str]) -> dict[str, Any]:
    from sklearn.metrics import precision_recall_fscore_support

    p, r, f, s = precision_recall_fscore_support(
        y_true,
        y_pred,
        labels=list(range(len(label_names))) if y_true.ndim == 1 else None,
        average=None,
        zero_division=0,
    )
    return {
        name: {"precision": _f(p[i]), "recall": _f(r[i]), "f1": _f(f[i]), "support": int(s[i])}
        for i, name in enumerate(label_names)
    }


def _averages(y_true: np.ndarray, y_pred: np.ndarray, labels: list[int] | None) -> dict[str, float]:
    from sklearn.metrics import precision_recall_fscore_support

    out: dict[str, float] = {}
    for avg in ("micro", "macro", "weighted"):
        p, r, f, _ = precision_recall_fscore_support(
            y_true, y_pred, labels=labels, average=avg, zero_division=0
        )
        out[f"{avg}_precision"], out[f"{avg}_recall"], out[f"{avg}_f1"] = _f(p), _f(r), _f(f)
    return out


def _clip(text: str) -> str:
    return text if len(text) <= MISTAKE_TEXT_CHARS else text[: MISTAKE_TEXT_CHARS - 1] + "…"


def multilabel_metrics(
    y_true: np.ndarray,
    y_prob: np.ndarray,
    y_pred: np.ndarray,
    label_names: list[str],
    texts: list[str] | None = None,
) -> dict[str, Any]:
    from sklearn.metrics import accuracy_score, hamming_loss, multilabel_confusion_matrix

    y_true = np.asarray(y_true, dtype=np.int64)
    y_pred = np.asarray(y_pred, dtype=np.int64)
    y_prob = np.asarray(y_prob, dtype=np.float64)
    metrics: dict[str, Any] = {"n": len(y_true), "multi_label": True}
    metrics["subset_accuracy"] = _f(accuracy_score(y_true, y_pred)) if len(y_true) else 0.0
    metrics["hamming_loss"] = _f(hamming_loss(y_true, y_pred)) if len(y_true) else 0.0
    metrics.update(_averages(y_true, y_pred, None))
    metrics["roc_auc_macro"] = roc_auc_macro(y_true, y_prob)
    metrics["per_label"] = _per_label(y_true, y_pred, label_names)
    matrices = multilabel_confusion_matrix(y_true, y_pred)
    metrics["confusion"] = {
        name: [[int(v) for v in row] for row in matrices[i]] for i, name in enumerate(label_names)
    }
    mistakes = []
    for i in np.nonzero((y_true != y_pred).any(axis=1))[0]:
        wrong = np.nonzero(y_true[i] != y_pred[i])[0]
        # How sure the model was about its worst wrong decision on this row.
        confidence = np.where(y_pred[i, wrong] == 1, y_prob[i, wrong], 1 - y_prob[i, wrong])
        worst = wrong[int(np.argmax(confidence))]
        mistakes.append((float(confidence.max()), int(i), int(worst)))
    mistakes.sort(key=lambda m: -m[0])
    metrics["confident_mistakes"] = [
        {
            "index": i,
            "text": _clip(texts[i]) if texts else "",
            "true_labels": [label_names[j] for j in np.nonzero(y_true[i])[0]],
            "predicted_labels": [label_names[j] for j in np.nonzero(y_pred[i])[0]],
            "label": label_names[j],
            "probability": _f(y_prob[i, j]),
            "confidence": _f(conf),
        }
        for conf, i, j in mistakes[:N_MISTAKES]
    ]
    return metrics


def singlelabel_metrics(
    y_true: np.ndarray,
    y_prob: np.ndarray,
    label_names: list[str],
    texts: list[str] | None = None,
    offsets: list[float] | None = None,
) -> dict[str, Any]:
    """y_true: class indices (n,); y_prob: (n, L) probabilities summing to 1.

    offsets: the model's per-class decision rule (decisions.py); the scores are those of the
    labels the model actually gives.
    """
    from sklearn.metrics import accuracy_score, confusion_matrix, roc_auc_score

    from .decisions import single_label_choice

    y_true = np.asarray(y_true, dtype=np.int64)
    y_prob = np.asarray(y_prob, dtype=np.float64)
    y_pred = single_label_choice(y_prob, offsets)
    labels = list(range(len(label_names)))
    metrics: dict[str, Any] = {"n": len(y_true), "multi_label": False}
    metrics["accuracy"] = _f(accuracy_score(y_true, y_pred)) if len(y_true) else 0.0
    metrics.update(_averages(y_true, y_pred, labels))
    auc = None
    present = np.unique(y_true)
    if len(present) >= 2 and len(label_names) >= 2:
        try:
            if len(label_names) == 2:
                auc = _f(roc_auc_score(y_true, y_prob[:, 1]))
            else:
                auc = roc_auc_macro(np.eye(len(label_names), dtype=np.int64)[y_true], y_prob)
        except ValueError:
            auc = None
    metrics["roc_auc_macro"] = auc
    metrics["per_label"] = _per_label(y_true, y_pred, label_names)
    metrics["confusion"] = {
        "labels": list(label_names),
        "matrix": confusion_matrix(y_true, y_pred, labels=labels).tolist() if len(y_true) else [],
    }
    wrong = np.nonzero(y_true != y_pred)[0]
    order = wrong[np.argsort(-y_prob[wrong, y_pred[wrong]])] if len(wrong) else wrong
    metrics["confident_mistakes"] = [
        {
            "index": int(i),
            "text": _clip(texts[i]) if texts else "",
            "true_labels": [label_names[y_true[i]]],
            "predicted_labels": [label_names[y_pred[i]]],
            "label": label_names[y_pred[i]],
            "probability": _f(y_prob[i, y_pred[i]]),
            "confidence": _f(y_prob[i, y_pred[i]]),
        }
        for i in order[:N_MISTAKES]
    ]
    return metrics


def macro_f1(truth: np.ndarray, pred: np.ndarray) -> float:
    """Macro-F1 of two rows x labels indicator matrices, without sklearn: tuning loops call it
    thousands of times. A label neither true nor predicted scores 0, as sklearn's does."""
    return float(macro_f1_of_counts(tp=(pred * truth).sum(axis=0), predicted=pred.sum(axis=0),
                                    actual=truth.sum(axis=0)))


def macro_f1_of_counts(*, tp: np.ndarray, predicted: np.ndarray,
                       actual: np.ndarray) -> np.ndarray:
    """Macro-F1 from per-label counts on the last axis, one score per leading index: many
    scorings at once (a grid of decision offsets, bootstrap resamples). A label neither true nor
    predicted scores 0, as in macro_f1."""
    denom = predicted + actual
    return np.where(denom > 0, 2 * tp / np.maximum(denom, 1), 0.0).mean(axis=-1)


def tune_thresholds(y_true: np.ndarray, y_prob: np.ndarray, default: float = 0.5) -> list[float]:
    """Per-label threshold maximising that label's F1 on validation data."""
    grid = np.round(np.arange(0.05, 0.951, 0.025), 4)
    thresholds = []
    for j in range(y_true.shape[1]):
        truth = y_true[:, j].astype(bool)
        if truth.all() or not truth.any():
            thresholds.append(default)  # nothing to learn from a one-class label
            continue
        best_t, best_f1 = default, -1.0
        for t in grid:
            pred = y_prob[:, j] >= t
            tp = float((pred & truth).sum())
            denom = float(pred.sum() + truth.sum())
            f1 = 2 * tp / denom if denom else 0.0
            # Prefer thresholds near 0.5 on ties: less overfit to a small validation split.
            if f1 > best_f1 + 1e-9 or (
                abs(f1 - best_f1) <= 1e-9 and abs(t - 0.5) < abs(best_t - 0.5)
            ):
                best_t, best_f1 = float(t), f1
        thresholds.append(best_t)
    return thresholds


def apply_thresholds(y_prob: np.ndarray, thresholds: list[float], *,
                     allow_empty: bool = False) -> np.ndarray:
    """0/1 decisions per label. A row no threshold passes gets its most likely label, unless
    `allow_empty`: a model trained on rows that carry no label may give none."""
    pred = (y_prob >= np.asarray(thresholds)[None, :]).astype(np.int64)
    if allow_empty:
        return pred
    # Without examples of "none of these", every article belongs to at least one label.
    empty = pred.sum(axis=1) == 0
    if empty.any() and y_prob.shape[1]:
        pred[empty, y_prob[empty].argmax(axis=1)] = 1
    return pred


def compute_metrics(
    labels: list[list[str]],
    y_prob: np.ndarray,
    label_names: list[str],
    multi_label: bool,
    thresholds: list[float] | None = None,
    texts: list[str] | None = None,
    offsets: list[float] | None = None,
    allow_empty: bool = False,
) -> dict[str, Any]:
    y_prob = np.asarray(y_prob, dtype=np.float64)
    if multi_label:
        # A row without a label is all zeros: scored right only when nothing is predicted.
        y_true = encode_labels(labels, label_names)
        y_pred = apply_thresholds(y_prob, thresholds or [0.5] * len(label_names),
                                  allow_empty=allow_empty)
        return multilabel_metrics(y_true, y_prob, y_pred, label_names, texts)
    index = {name: i for i, name in enumerate(label_names)}
    y_true = np.array([index[row[0]] for row in labels], dtype=np.int64)
    return singlelabel_metrics(y_true, y_prob, label_names, texts, offsets)
