"""A trained model as a folder that loads without MedLitBot, with a model card.

A transformer becomes a Hugging Face folder (config.json with its labels and problem type,
safetensors weights, the tokenizer) beside onnx/model.onnx where the ONNX export works; a TF-IDF
model is its vectorizer and head in skops (predict.py's pipeline_load makes them one scikit-learn
Pipeline). What the app applies after the model
(calibration, per-label thresholds or class offsets, the "no label" rule) is postprocess.json,
and predict.py (export_predict.py, copied as it stands) applies it with numpy alone, so the
folder predicts what the app predicts. A kind that cannot be reproduced that way is refused
with the reason: never a folder that predicts something else.
"""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

from django.conf import settings
from django.utils.text import slugify

from classification import ml_models
from classification.engine import registry
from classification.engine.artifacts import MANIFEST, library_versions, read_manifest
from classification.mlmodels import model_card
from classification.mlmodels.export_metrics import test_intervals
from classification.models import MLModel
from classification.selectors import mlmodel_artifact_dir
from core.zipstream import zip_directory_stream

logger = logging.getLogger(__name__)

SKOPS_FILE = "model.skops"
ONNX_FILE = "onnx/model.onnx"
PREDICT_SCRIPT = Path(__file__).with_name("export_predict.py")
EXPORT_FORMAT = "medlitbot-export/1"
# fp32 graph against fp32 model: rounding alone stays orders of magnitude below this.
ONNX_MAX_LOGIT_GAP = 1e-3
ONNX_CHECK_TEXTS = ("Randomised trial of statins after myocardial infarction.",
                    "A cohort study of glioma survival in adults treated with temozolomide "
                    "and radiotherapy, with a long follow-up.")
# Why each kind that is not exported is refused, by the classifier its manifest names.
REFUSED = {
    registry.ENSEMBLE: (
        "an ensemble averages its members' probabilities with weights tuned in MedLitBot; one "
        "folder cannot carry several models and their weighting faithfully. Export each "
        "member from its own model page instead."),
    registry.EMBEDDING: (
        "its features are MiniLM sentence embeddings mean-pooled by MedLitBot's own encoder "
        "code, which a folder loadable without MedLitBot does not carry."),
    registry.WORDS_AND_VECTORS: (
        "half of its features are MiniLM sentence embeddings mean-pooled by MedLitBot's own "
        "encoder code, which a folder loadable without MedLitBot does not carry."),
}


class ExportRefused(ValueError):
    """A model this export will not write: the message says why."""


class ExportNotTrained(ExportRefused):
    """A model with no trained files to export yet."""


def _backend(manifest: dict[str, Any]) -> str:
    """"transformers" or "skops" for the kinds exported; ExportRefused naming why otherwise."""
    model_type = str(manifest.get("model_type", ""))
    spec = registry.REGISTRY.get(model_type)
    if spec is None:
        raise ExportRefused(f"This model's kind ({model_type!r}) is unknown to this MedLitBot: "
                            f"nothing is exported.")
    if spec.classifier == registry.TRANSFORMER:
        return "transformers"
    if spec.classifier in (registry.TFIDF, registry.TFIDF_SVM):
        return "skops"
    why = REFUSED.get(spec.classifier, "its kind has no export that predicts as it does.")
    raise ExportRefused(f"This model ({spec.label}) cannot be exported: {why}")


def _hf_write(*, source: Path, out: Path, clf: Any) -> dict[str, Any]:
    """The Hugging Face files of the artifact, config.json made to say its problem type."""
    for entry in source.iterdir():
        if entry.is_file() and entry.name != MANIFEST:
            shutil.copy2(entry, out / entry.name)
    config_path = out / "config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["problem_type"] = ("multi_label_classification" if clf.multi_label
                              else "single_label_classification")
    config["id2label"] = {str(i): name for i, name in enumerate(clf.label_names)}
    config["label2id"] = {name: i for i, name in enumerate(clf.label_names)}
    config_path.write_text(json.dumps(config, indent=2, sort_keys=True), encoding="utf-8")
    if not (out / "model.safetensors").is_file():
        raise ExportRefused("This transformer's weights are not in safetensors form "
                            "(model.safetensors): retrain it to export it.")
    return {"onnx": _onnx_write(out=out)}


def _onnx_write(*, out: Path) -> str:
    """onnx/model.onnx through the fast path's fp32 exporter; "" when written, else why not.

    The model is loaded afresh from the exported folder: the exporter moves the model it is
    given to the CPU, which must never be the app's cached one."""
    from classification.engine import fast_inference

    reason = fast_inference.unavailable_reason("cpu")
    if reason:
        return reason
    try:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        model = AutoModelForSequenceClassification.from_pretrained(out).eval()
        tokenizer = AutoTokenizer.from_pretrained(out)
        (out / ONNX_FILE).parent.mkdir()
        fast_inference.export_fp32_onnx(model=model, tokenizer=tokenizer,
                                        target=out / ONNX_FILE)
        gap = _onnx_gap(model=model, tokenizer=tokenizer, path=out / ONNX_FILE)
    except Exception as exc:  # any exporter error costs the ONNX file, never the export
        logger.warning("export: no ONNX graph: %s", exc, exc_info=True)
        shutil.rmtree(out / Path(ONNX_FILE).parent, ignore_errors=True)
        return f"{type(exc).__name__}: {exc}"
    if gap > ONNX_MAX_LOGIT_GAP:
        shutil.rmtree(out / Path(ONNX_FILE).parent, ignore_errors=True)
        return (f"the exported graph's logits were {gap:.2g} away from the model's on sample "
                f"texts, more than {ONNX_MAX_LOGIT_GAP}")
    return ""


def _onnx_gap(*, model: Any, tokenizer: Any, path: Path) -> float:
    """The largest logit difference between the graph and the model on a few padded texts."""
    import numpy as np
    import onnxruntime
    import torch

    inputs = tokenizer(list(ONNX_CHECK_TEXTS), padding=True, truncation=True,
                       return_tensors="np")
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    graph = session.run(["logits"], {k: np.asarray(inputs[k], dtype=np.int64) for k in names})[0]
    with torch.inference_mode():
        own = model(**{k: torch.as_tensor(inputs[k]) for k in names}).logits.float().numpy()
    return float(np.abs(graph - own).max())


def _skops_write(*, source: Path, out: Path) -> dict[str, Any]:
    """The artifact's own model.skops, as it stands: the vectorizer and head, each vocabulary
    kept as an array of its terms in column order (sklearn_files says why: as a dict, skops
    writes one JSON node per term, and a demo-sized TF-IDF model took minutes to dump). The
    types loading it must trust beyond skops's defaults are all ones the app trusts itself."""
    from classification.engine import sklearn_files

    skops_io = sklearn_files._skops_io()
    shutil.copy2(source / sklearn_files.SKOPS_FILE, out / SKOPS_FILE)
    trusted = sorted(skops_io.get_untrusted_types(file=out / SKOPS_FILE))
    unknown = sorted(set(trusted) - set(sklearn_files.TRUSTED_TYPES))
    if unknown:
        raise ExportRefused(f"This model holds types MedLitBot does not trust "
                            f"({', '.join(unknown)}): nothing is exported.")
    return {"skops_file": SKOPS_FILE, "skops_trusted_types": trusted}


def _rules(*, clf: Any, backend: str, written: dict[str, Any]) -> dict[str, Any]:
    """postprocess.json: everything predict.py applies after the model's raw probabilities."""
    calibration = clf.calibration.as_dict()
    calibration.pop("selection", None)
    defaults = clf.thresholds or [0.5] * len(clf.label_names)
    recall = [r["threshold"] if r.get("threshold") is not None else defaults[j]
              for j, r in enumerate(clf.recall_thresholds)] or None
    config = clf.config
    rules: dict[str, Any] = {
        "format": EXPORT_FORMAT, "backend": backend, "label_names": list(clf.label_names),
        "multi_label": clf.multi_label, "allows_no_label": clf.allows_no_label,
        "calibration": calibration, "thresholds": list(clf.thresholds),
        "class_offsets": list(clf.class_offsets), "recall_target": clf.recall_target,
        "recall_decision_thresholds": recall,
        "metadata_used": list(getattr(config, "metadata_used", None) or []),
        "metadata_style": getattr(config, "metadata_style", "") or "",
        "formula": model_card.FORMULA,
        **{k: v for k, v in written.items() if k != "onnx"},
    }
    if backend == "transformers":
        plan = clf.device_plan
        rules["max_length"] = int(clf.max_length)
        # What this node's mlmodel_predict runs it in; predict.py follows a bfloat16 on the CPU.
        rules["dtype"] = plan.dtype if plan is not None else "float32"
    return rules


def medlitbot_version() -> dict[str, str]:
    """The version this install declares and the git commit it runs, where either is known."""
    try:
        version = metadata.version("medlitbot")
    except metadata.PackageNotFoundError:
        import tomllib

        try:
            with (Path(settings.BASE_DIR) / "pyproject.toml").open("rb") as fh:
                version = str(tomllib.load(fh)["project"]["version"])
        except (OSError, KeyError, tomllib.TOMLDecodeError):
            version = "unknown"
    try:
        commit = subprocess.run(["git", "-C", str(settings.BASE_DIR), "rev-parse", "HEAD"],
                                capture_output=True, text=True, timeout=5,
                                check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return {"version": version, "commit": commit or "unknown"}


def mlmodel_export(*, ml_model: MLModel) -> Path:
    """A new temporary folder holding the export; the caller removes it (mlmodel_export_stream
    does once the zip is sent). ExportNotTrained for a model with no files, ExportRefused for
    one whose kind cannot be exported faithfully."""
    folder = mlmodel_artifact_dir(ml_model=ml_model) if ml_model.is_trained else None
    if folder is None or not (folder / MANIFEST).is_file():
        raise ExportNotTrained(f"Model {ml_model.pk} ({ml_model.name}) is not trained, or its "
                               f"files are missing: there is nothing to export yet.")
    manifest = read_manifest(str(folder))
    backend = _backend(manifest)
    clf = ml_models.load_classifier(str(folder))  # its own copy: the ONNX export moves it
    out = Path(tempfile.mkdtemp(prefix="medlitbot-export-"))
    try:
        written = (_hf_write(source=folder, out=out, clf=clf) if backend == "transformers"
                   else _skops_write(source=folder, out=out))
        rules = _rules(clf=clf, backend=backend, written=written)
        (out / "postprocess.json").write_text(json.dumps(rules, indent=2), encoding="utf-8")
        shutil.copy2(PREDICT_SCRIPT, out / "predict.py")
        card = model_card.model_card_text(
            ml_model=ml_model, clf=clf, rules=rules, onnx_note=written.get("onnx"),
            intervals=test_intervals(ml_model=ml_model, clf=clf),
            versions={**medlitbot_version(),
                      **(ml_model.library_versions or library_versions())})
        (out / "README.md").write_text(card, encoding="utf-8")
    except BaseException:
        shutil.rmtree(out, ignore_errors=True)
        raise
    return out


def mlmodel_export_stream(*, ml_model: MLModel) -> tuple[str, Iterator[bytes]]:
    """(the zip's file name, its bytes as a stream); the folder is built before the first byte,
    so a refusal is raised here, and removed once the stream ends or is dropped."""
    folder = mlmodel_export(ml_model=ml_model)
    name = f"{slugify(ml_model.name) or f'model-{ml_model.pk}'}-export"

    def stream() -> Iterator[bytes]:
        try:
            yield from zip_directory_stream(folder, prefix=name)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    return f"{name}.zip", stream()

