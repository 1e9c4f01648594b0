"""The model registry: every offered model type, importable without the heavy libraries."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from classification import ml_models

ROOT = Path(__file__).resolve().parents[1]


def test_registry_offers_every_contracted_model_type_with_a_label_and_kind() -> None:
    expected = {
        "biobert",
        "pubmedbert",
        "scibert",
        "clinicalbert",
        "minilm",
        "custom",
        "tfidf_logreg",
        "tfidf_svm",
        "minilm_embed_logreg",
        "tfidf_minilm_svm",
        "ensemble",
        "search",
        "adapt",
        "adapted",
    }
    assert set(ml_models.REGISTRY) == expected
    for spec in ml_models.REGISTRY.values():
        assert spec.label
        assert spec.description
        assert spec.kind in {"transformer", "baseline", "embedding", "ensemble", "search",
                             "adapt"}
    assert ml_models.REGISTRY["biobert"].hub_id == "dmis-lab/biobert-base-cased-v1.2"


def test_importing_ml_models_does_not_import_torch_transformers_or_sklearn() -> None:
    code = (
        "import sys, json; import classification.ml_models as m; "
        "heavy = ('torch', 'transformers', 'sklearn'); "
        "print(json.dumps(sorted(k for k in heavy if k in sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def test_classifier_classes_import_from_the_facade_without_the_heavy_libraries() -> None:
    code = (
        "import sys, json\n"
        "from classification.ml_models import (BaseClassifier, DevicePlan,\n"
        "    EmbeddingLogRegClassifier, SklearnClassifier, TransformerClassifier,\n"
        "    create_classifier)\n"
        "kinds = {k: type(create_classifier(k)).__name__\n"
        "         for k in ('minilm', 'tfidf_logreg', 'minilm_embed_logreg')}\n"
        "assert issubclass(TransformerClassifier, BaseClassifier)\n"
        "assert issubclass(EmbeddingLogRegClassifier, SklearnClassifier)\n"
        "assert DevicePlan().device == 'cpu'\n"
        "heavy = ('torch', 'transformers', 'sklearn', 'datasets')\n"
        "print(json.dumps({'kinds': kinds,\n"
        "                  'heavy': sorted(k for k in heavy if k in sys.modules)}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["heavy"] == []
    assert report["kinds"] == {
        "minilm": "TransformerClassifier",
        "tfidf_logreg": "SklearnClassifier",
        "minilm_embed_logreg": "EmbeddingLogRegClassifier",
    }


def test_an_unknown_facade_attribute_still_raises_attribute_error() -> None:
    with pytest.raises(AttributeError):
        ml_models.NoSuchClassifier  # noqa: B018


def test_bundled_and_sklearn_models_report_bundled_availability() -> None:
    for key in ("minilm", "minilm_embed_logreg", "tfidf_logreg", "tfidf_svm"):
        assert ml_models.model_availability(key)["status"] == "bundled"


def test_hub_only_models_are_not_reported_as_available_here(tmp_path: Path) -> None:
    status = ml_models.model_availability("biobert", local_dir=str(tmp_path))
    assert status["status"] in {"download", "unreachable"}
    assert "huggingface-cli download dmis-lab/biobert-base-cased-v1.2" in status["detail"]


def test_a_model_placed_in_the_local_model_folder_counts_as_available(tmp_path: Path) -> None:
    (tmp_path / "scibert").mkdir()
    (tmp_path / "scibert" / "config.json").write_text("{}")
    status = ml_models.model_availability("scibert", local_dir=str(tmp_path))
    assert status["status"] == "bundled"
