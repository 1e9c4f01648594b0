"""The README.md model card of an exported model, in the Hugging Face model-card form: YAML
front matter, then what it was trained on, how it was measured, and what it is for."""

from __future__ import annotations

import json
from typing import Any

from django.utils import timezone

from classification.models import MLModel

FORMULA = {
    "calibration": (
        "p = the model's probabilities (sigmoid per label if multi_label, else softmax); "
        "z = logit(clip(p, 1e-7, 1 - 1e-7)). Per label j: isotonic[j] given -> "
        "interp(p_j, x, y); else platt[j] = [a, b] given -> sigmoid(a z_j + b); else, "
        "multi-label, sigmoid(z_j / temperatures[j]). Single-label: with isotonic or Platt "
        "maps each row is divided by its sum; otherwise softmax(log p / temperatures[0]). "
        "Method none, or every temperature 1 and no map: p unchanged."),
    "decision": (
        "Multi-label: label j is given when p_j >= thresholds[j]; a row given no label gets "
        "its likeliest one unless allows_no_label. Single-label: the label argmax_j "
        "(log(clip(p_j, 1e-12)) + class_offsets[j]), plain argmax when there are no offsets."),
    "recall": (
        "threshold=recall: every label with p_j >= recall_decision_thresholds[j], and every "
        "label the rule above gives."),
}
MACHINE_WORDS = ("dir", "path", "storage", "checkpoint")
SCREENING_LIMITS = (
    "- A screening aid for systematic reviews and literature triage: it ranks and labels "
    "titles and abstracts so that people read the likeliest first. It is not a clinical "
    "decision tool: never use its output to diagnose, treat or advise a patient.\n"
    "- Every exclusion it suggests should be checked by a person, or left to a recall "
    "threshold chosen for the review; the figures on this card are estimates from a few hundred "
    "held-out rows at best.\n"
    "- It knows only its labels and what its training rows looked like: texts from another "
    "field, another language, another era of the literature or another kind of document "
    "(full texts, clinical notes, social media) are out of domain and may be labelled "
    "confidently and wrongly.\n"
    "- Its probabilities are calibrated on held-out rows of the same dataset; on other data "
    "they are not a promise."
)


def _yaml(*, ml_model: MLModel, rules: dict[str, Any]) -> str:
    tags = ["text-classification", "medlitbot", "medical-literature", "systematic-review",
            "multi-label" if rules["multi_label"] else "single-label", rules["backend"]]
    library = "transformers" if rules["backend"] == "transformers" else "sklearn"
    lines = ["---", "license: other", "license_name: unknown",
             "license_details: The training data's and base model's licences apply; "
             "MedLitBot does not know them.",
             f"library_name: {library}", "pipeline_tag: text-classification", "tags:"]
    lines += [f"  - {tag}" for tag in tags]
    lines.append("---")
    return "\n".join(lines)


def _data(*, ml_model: MLModel, rules: dict[str, Any]) -> list[str]:
    dataset = ml_model.dataset
    if dataset is None:
        return ["## Data", "", "The dataset it was trained on has since been deleted."]
    counts = dataset.label_counts or {}
    if rules["multi_label"]:
        unlabelled = ("kept as examples of none of the labels (all-zero targets), so the "
                      "model may give no label" if rules["allows_no_label"] else
                      "none in training: every prediction gets at least one label")
    else:
        unlabelled = "left out of training and of every metric (single-label: one class a row)"
    lines = ["## Data", "", f"- Dataset: {dataset.name} ({dataset.row_count} rows, "
             f"{'multi-label' if dataset.is_multilabel else 'single-label'})",
             f"- Rows without a label: {unlabelled}"]
    no_label = (dataset.report or {}).get("no_label_rows")
    if no_label:
        lines.append(f"- At import: {json.dumps(no_label, sort_keys=True)}")
    lines += ["", "| Label | Rows |", "|---|---|"]
    lines += [f"| {name} | {counts.get(name, '')} |" for name in rules["label_names"]]
    sizes = dataset.split_sizes or {}
    lines += ["", "## Split", "",
              f"- train {sizes.get('train', '?')}, validation {sizes.get('validation', '?')}, "
              f"test {sizes.get('test', '?')} rows (seed {dataset.split_seed}); duplicate "
              f"texts never straddle splits.",
              "- Fitted on train; calibration and decision rules tuned on validation "
              "(cross-fitted over train and validation for TF-IDF kinds); measured on test."]
    return lines


def _metrics(*, ml_model: MLModel, intervals: dict[str, Any]) -> list[str]:
    stored = ml_model.metrics or {}
    lines = ["## Metrics", "",
             f"Measured on the {stored.get('evaluated_on', 'validation')} split "
             f"({stored.get('n', '?')} rows scored)."]
    if intervals.get("available"):
        lines += ["", f"95% intervals: percentiles of {intervals['rounds']} bootstrap "
                  f"resamples of the {intervals['rows']} test rows.", "",
                  "| Metric | Value | 95% interval |", "|---|---|---|"]
        lines += [f"| {name} | {f['value']:.4f} | {f['low']:.4f} to {f['high']:.4f} |"
                  for name, f in intervals["metrics"].items()]
    else:
        lines += ["", f"Intervals unavailable: {intervals.get('reason', 'not computed')}.", "",
                  "| Metric | Value |", "|---|---|"]
        lines += [f"| {key} | {stored[key]:.4f} |" for key in
                  ("micro_f1", "macro_f1", "accuracy", "subset_accuracy")
                  if isinstance(stored.get(key), int | float)]
    if isinstance(stored.get("roc_auc_macro"), int | float):
        lines.append(f"\nROC-AUC (macro): {stored['roc_auc_macro']:.4f}.")
    per_label = stored.get("per_label") or {}
    if per_label:
        lines += ["", "| Label | Precision | Recall | F1 | Support |", "|---|---|---|---|---|"]
        lines += [f"| {name} | {v.get('precision', 0):.3f} | {v.get('recall', 0):.3f} | "
                  f"{v.get('f1', 0):.3f} | {v.get('support', '')} |"
                  for name, v in per_label.items()]
    return lines


def _calibration(*, ml_model: MLModel, clf: Any) -> list[str]:
    report = (ml_model.metrics or {}).get("calibration") or {}
    lines = ["## Calibration", "",
             f"- Method: {clf.calibration.method} (applied: {clf.calibration.chosen}); "
             f"per label: " + "; ".join(f"{row['label']}: {row['calibration']}" for row in
                                        clf.calibration.describe(clf.label_names))]
    if report.get("ece_after") is not None:
        lines.append(f"- Expected calibration error ({report.get('bins', 15)} bins, "
                     f"{report.get('events', '')}): {report['ece_before']:.4f} before, "
                     f"{report['ece_after']:.4f} after calibration on the measured split.")
    return lines


def _files(*, rules: dict[str, Any], onnx_note: str | None) -> list[str]:
    lines = ["## Using it without MedLitBot", ""]
    if rules["backend"] == "transformers":
        lines += ["```python", "from transformers import AutoModelForSequenceClassification, "
                  "AutoTokenizer", 'model = AutoModelForSequenceClassification.from_pretrained'
                  '(".")', 'tokenizer = AutoTokenizer.from_pretrained(".")', "```", "",
                  f"Texts are truncated to {rules['max_length']} tokens; the app ran the model "
                  f"in {rules['dtype']}.",
                  "- ONNX: onnx/model.onnx (fp32, inputs as the tokenizer names them, output "
                  "`logits`)" + ("; the app runs the model in reduced precision, so the graph's "
                                 "probabilities differ from its by about 1e-4 to 1e-3."
                                 if rules["dtype"] != "float32" else ".")
                  if not onnx_note else
                  f"- ONNX: not included ({onnx_note})."]
    else:
        trusted = rules["skops_trusted_types"]
        lines += ["```python", "import skops.io",
                  f"parts = skops.io.load(\"model.skops\", trusted={trusted!r})",
                  "# vectorizer, head, and each vocabulary as its terms in column order:",
                  "from predict import pipeline_load  # sets them back, builds the Pipeline",
                  "raw = pipeline_load().predict_proba(texts)  # before calibration", "```", "",
                  "Trusted types beyond skops's defaults: "
                  + (", ".join(f"`{t}`" for t in trusted) or "none") + "."]
    lines += ["", "The app's predictions are the raw probabilities through postprocess.json "
              "(calibration, then the decision rule); `python predict.py texts.json` applies "
              "both and prints what MedLitBot predicts, with numpy and the runtime above only.",
              "", f"- Calibration: {FORMULA['calibration']}",
              f"- Decision: {FORMULA['decision']}", f"- Recall mode: {FORMULA['recall']}"]
    if rules["metadata_used"]:
        lines.append(f"- Input: trained with metadata ({', '.join(rules['metadata_used'])}) "
                     f"in its {rules['metadata_style']} form, which texts must carry as they did "
                     f"in MedLitBot; plain texts are read without it.")
    return lines


def model_card_text(*, ml_model: MLModel, clf: Any, rules: dict[str, Any],
                    onnx_note: str | None, intervals: dict[str, Any],
                    versions: dict[str, str]) -> str:
    """README.md of the export of `ml_model`, whose loaded classifier is `clf`."""
    # Folders of the machine that trained it mean nothing to whoever reads the card.
    trained = (ml_model.trained_at.date().isoformat() if ml_model.trained_at
               else "at an unknown date")
    config = {k: v for k, v in (clf.config.as_dict() if clf.config else {}).items()
              if not any(word in k for word in MACHINE_WORDS)}
    dataset = ml_model.dataset.name if ml_model.dataset else "a deleted dataset"
    sections = [
        _yaml(ml_model=ml_model, rules=rules), "", f"# {ml_model.name}", "",
        f"A {ml_model.model_type} text classifier of medical-literature titles and abstracts, "
        f"trained in MedLitBot on {dataset}. Labels "
        f"({'multi-label' if rules['multi_label'] else 'single-label'}): "
        + ", ".join(rules["label_names"]) + ".", "",
        *_data(ml_model=ml_model, rules=rules), "",
        *_metrics(ml_model=ml_model, intervals=intervals), "",
        *_calibration(ml_model=ml_model, clf=clf), "",
        "## Intended use and limits", "", SCREENING_LIMITS, "",
        "Languages: those of the training rows (MedLitBot's corpora are mostly English).", "",
        *_files(rules=rules, onnx_note=onnx_note), "",
        "## Training", "", "```json", json.dumps(config, indent=2, sort_keys=True, default=str),
        "```", "",
        f"Exported by MedLitBot {versions.get('version')} (commit {versions.get('commit')}) on "
        f"{timezone.now().date().isoformat()}; trained {trained}."
        " Libraries: " + ", ".join(f"{k} {v}" for k, v in versions.items()
                                   if k not in ("version", "commit")) + ".",
    ]
    return "\n".join(sections) + "\n"
