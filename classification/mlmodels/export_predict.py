"""Predict with an exported MedLitBot model, without MedLitBot.

This file is copied as it stands into every export as predict.py; it imports nothing of
MedLitBot, only numpy, the standard library and the folder's own runtime (transformers and
torch, onnxruntime, or skops). It reproduces the app's predictions: the model's raw
probabilities, then the calibration map and the decision rules written in postprocess.json.

    python predict.py texts.json             # a JSON list of strings; "-" reads it from stdin
    python predict.py texts.txt              # one text per line
    python predict.py texts.json --threshold recall
    python predict.py texts.json --backend onnx   # transformers exports with onnx/model.onnx

Prints a JSON list, one {"labels": [...], "probabilities": {label: p}} per text.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
EPS = 1e-7
BATCH = 32


def rules_load(folder: Path = HERE) -> dict[str, Any]:
    return json.loads((folder / "postprocess.json").read_text(encoding="utf-8"))


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, EPS, 1 - EPS)
    return np.log(p) - np.log1p(-p)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-z))


def _softmax_tempered(prob: np.ndarray, temperature: float) -> np.ndarray:
    z = np.log(np.clip(prob, EPS, 1.0)) / temperature
    z -= z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def calibrate(prob: np.ndarray, calibration: dict[str, Any]) -> np.ndarray:
    """The calibration map of postprocess.json applied to raw probabilities, (n, L) each."""
    prob = np.asarray(prob, dtype=np.float64)
    temps = [float(t) for t in calibration.get("temperatures") or []]
    iso, platt = calibration.get("isotonic") or [], calibration.get("platt") or []
    multi = bool(calibration.get("multi_label"))
    identity = calibration.get("method", "none") == "none" or (
        all(abs(t - 1.0) < 1e-12 for t in temps) and not any(iso) and not any(platt))
    if identity or not prob.size:
        return prob
    columns = []
    for j in range(prob.shape[1]):
        if j < len(iso) and iso[j]:
            columns.append(np.interp(prob[:, j], iso[j]["x"], iso[j]["y"]))
        elif j < len(platt) and platt[j]:
            columns.append(_sigmoid(platt[j][0] * _logit(prob[:, j]) + platt[j][1]))
        elif multi and j < len(temps):
            columns.append(_sigmoid(_logit(prob[:, j]) / temps[j]))
        else:
            columns.append(prob[:, j])
    out = np.column_stack(columns)
    if multi:
        return out
    if any(iso) or any(platt):
        return out / np.clip(out.sum(axis=1, keepdims=True), EPS, None)
    return _softmax_tempered(prob, temps[0])


def _thresholded(prob: np.ndarray, thresholds: list[float], allow_empty: bool) -> np.ndarray:
    pred = (prob >= np.asarray(thresholds)[None, :]).astype(np.int64)
    empty = pred.sum(axis=1) == 0
    if not allow_empty and empty.any() and prob.shape[1]:
        pred[empty, prob[empty].argmax(axis=1)] = 1
    return pred


def decide(prob: np.ndarray, rules: dict[str, Any], threshold: str = "f1") -> np.ndarray:
    """(n, L) 0/1 decisions of calibrated probabilities under postprocess.json's rules."""
    n_labels = len(rules["label_names"])
    if rules["multi_label"]:
        chosen = _thresholded(prob, rules["thresholds"] or [0.5] * n_labels,
                              bool(rules["allows_no_label"]))
    else:
        offsets = rules.get("class_offsets") or []
        scores = (np.log(np.clip(prob, 1e-12, None)) + np.asarray(offsets)[None, :]
                  if any(offsets) else prob)
        chosen = np.eye(n_labels, dtype=np.int64)[scores.argmax(axis=1)]
    if threshold == "f1":
        return chosen
    if threshold != "recall" or not rules.get("recall_decision_thresholds"):
        raise SystemExit("threshold is f1, or recall for a model that has recall thresholds")
    recall = _thresholded(prob, rules["recall_decision_thresholds"],
                          bool(rules["allows_no_label"]))
    return np.maximum(recall, chosen)


def _torch_probabilities(texts: list[str], rules: dict[str, Any], tokenizer: Any) -> np.ndarray:
    import torch
    from transformers import AutoModelForSequenceClassification

    model = AutoModelForSequenceClassification.from_pretrained(HERE).eval()
    dtype = torch.bfloat16 if rules.get("dtype") == "bfloat16" else None
    out = []
    with torch.inference_mode():
        for start in range(0, len(texts), BATCH):
            inputs = tokenizer(texts[start:start + BATCH], truncation=True, padding=True,
                               max_length=rules["max_length"], return_tensors="pt")
            with (torch.autocast("cpu", dtype=dtype) if dtype else contextlib.nullcontext()):
                logits = model(**inputs).logits.float()
            prob = torch.sigmoid(logits) if rules["multi_label"] else torch.softmax(logits, -1)
            out.append(prob.numpy())
    return np.concatenate(out).astype(np.float64)


def _onnx_probabilities(texts: list[str], rules: dict[str, Any], tokenizer: Any) -> np.ndarray:
    import onnxruntime

    session = onnxruntime.InferenceSession(str(HERE / "onnx" / "model.onnx"),
                                           providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    out = []
    for start in range(0, len(texts), BATCH):
        inputs = tokenizer(texts[start:start + BATCH], truncation=True, padding=True,
                           max_length=rules["max_length"], return_tensors="np")
        logits = session.run(["logits"], {k: np.asarray(inputs[k], dtype=np.int64)
                                          for k in names})[0].astype(np.float64)
        if rules["multi_label"]:
            out.append(1.0 / (1.0 + np.exp(-logits)))
        else:
            shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
            out.append(shifted / shifted.sum(axis=1, keepdims=True))
    return np.concatenate(out)


def pipeline_load(rules: dict[str, Any] | None = None) -> Any:
    """The scikit-learn Pipeline (vectorizer, head) of a skops export.

    model.skops holds {"vectorizer", "head", "vectorizer__terms"}: each vocabulary as an array
    of its terms in column order (a FeatureUnion's as a dict of them by member), which loads in
    milliseconds where skops's form of a 100,000-term dict takes minutes."""
    import skops.io
    from sklearn.pipeline import Pipeline

    rules = rules or rules_load()
    parts = skops.io.load(HERE / rules["skops_file"], trusted=rules["skops_trusted_types"])
    vectorizer, terms = parts["vectorizer"], parts.get("vectorizer__terms")
    members = dict(getattr(vectorizer, "transformer_list", []))
    for name, column_terms in (terms.items() if isinstance(terms, dict) else
                               [(None, terms)] if terms is not None else []):
        target = vectorizer if name is None else members[name]
        target.vocabulary_ = {term: i for i, term in enumerate(column_terms.tolist())}
    return Pipeline([("vectorizer", vectorizer), ("head", parts["head"])])


def raw_probabilities(texts: list[str], rules: dict[str, Any], backend: str) -> np.ndarray:
    """The model's own probabilities, before calibration, (n, L) in input order."""
    if rules["backend"] == "skops":
        return np.asarray(pipeline_load(rules).predict_proba(texts), dtype=np.float64)
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(HERE)
    if backend == "onnx":
        return _onnx_probabilities(texts, rules, tokenizer)
    return _torch_probabilities(texts, rules, tokenizer)


def predict(texts: list[str], *, threshold: str = "f1", backend: str = "torch"
            ) -> list[dict[str, Any]]:
    rules = rules_load()
    if not texts:
        return []
    prob = calibrate(raw_probabilities(texts, rules, backend), rules["calibration"])
    chosen = decide(prob, rules, threshold)
    names = rules["label_names"]
    return [{"labels": [names[j] for j in np.nonzero(chosen[i])[0]],
             "probabilities": {name: float(prob[i, j]) for j, name in enumerate(names)}}
            for i in range(len(prob))]


def _texts(source: str) -> list[str]:
    text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    if source == "-" or source.endswith(".json"):
        texts = json.loads(text)
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            raise SystemExit("The JSON input must be a list of strings.")
        return texts
    return [line for line in text.splitlines() if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("texts", help="a .json list of strings, a .txt of one text a line, "
                        "or - for JSON on stdin")
    parser.add_argument("--threshold", choices=("f1", "recall"), default="f1")
    parser.add_argument("--backend", choices=("torch", "onnx"), default="torch",
                        help="transformers exports only: PyTorch, or onnx/model.onnx")
    args = parser.parse_args()
    json.dump(predict(_texts(args.texts), threshold=args.threshold, backend=args.backend),
              sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
