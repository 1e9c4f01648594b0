"""Expected calibration error (ECE) before and after calibration, on the demo data with the
app's own split, per model kind and seed; and whether the recall thresholds hold on test.

The demo CSV is imported through MedLitBot's ingestion service exactly as
scripts/evaluate_quality.py does (seed 42, 80/10/10). Each model is trained once per seed as a
job trains it (calibration "select", the default: engine/calibration_select.py). Its raw
validation and test probabilities are then kept and:

- the selection is run on the validation probabilities: "before" is none's ECE and "after" the
  chosen method's, both out of fold on validation (the figures the model page states), then
  on test, where the chosen map (fitted on all of validation) meets rows it never saw;
- every single method (temperature, Platt, isotonic, auto) is fitted on the same validation
  probabilities and scored on test, so the selection can be judged against each of them.

ECE: 15 equal-width bins over every article-label probability (the demo data is multi-label;
engine/calibration.py). The encoder kinds keep their embeddings in a scratch cache, so the
second and third seeds embed nothing again.

Usage: python scripts/benchmark_calibration.py [--models tfidf_logreg,tfidf_svm,...]
       [--seeds 42,43,44] [--epochs 3] [--dump-splits FILE] [--splits FILE] [--model-path DIR]
       --dump-splits writes the app's split as JSON and stops; --splits reads it instead of
       importing (no Django needed: for a machine with a GPU); --model-path trains the
       encoder kinds from that folder instead of the bundled MiniLM.
Last line: one JSON object (per model: per seed and mean, the selection's ECE before and after
on validation out of fold and on test, the method chosen, and each single method on test).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# The scripts' folder (evaluate_quality's import) and the repository (the engine).
sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]

MODELS = ("tfidf_logreg", "tfidf_svm", "minilm_embed_logreg", "minilm")
METHODS = ("temperature", "platt", "isotonic", "auto")
COLUMNS = ("val_before", "val_after", "test_before", "test_after")


def _ece(prob: Any, truth: Any, multi: bool) -> float:
    from classification.engine.calibration import calibration_events, expected_calibration_error

    return float(expected_calibration_error(*calibration_events(prob, truth, multi)))


def load_splits(args: argparse.Namespace, scratch: Path) -> tuple[Any, Any, Any, list[str], bool]:
    """The app's split: imported as setup_demo imports it, or read from a --dump-splits file."""
    from classification.engine.types import TextData

    if args.splits:
        data = json.loads(Path(args.splits).read_text(encoding="utf-8"))
        train, val, test = (TextData(data[s]["texts"], data[s]["labels"])
                            for s in ("train", "validation", "test"))
        return train, val, test, data["labels"], data["multi_label"]
    from evaluate_quality import import_demo

    train, val, test, labels, multi = import_demo(scratch)
    if args.dump_splits:
        Path(args.dump_splits).write_text(json.dumps({
            "labels": labels, "multi_label": multi,
            **{name: {"texts": d.texts, "labels": d.labels}
               for name, d in zip(("train", "validation", "test"), (train, val, test),
                                  strict=True)}}), encoding="utf-8")
    return train, val, test, labels, multi


def _train(model_type: str, seed: int, train: Any, val: Any, labels: list[str], multi: bool,
           epochs: int, scratch: Path, model_path: str | None) -> tuple[Any, float]:
    from classification.ml_models import REGISTRY, TrainConfig, create_classifier

    config = TrainConfig(label_names=labels, multi_label=multi, epochs=epochs, seed=seed,
                         output_dir=str(scratch / f"job-{model_type}-{seed}"),
                         embedding_cache_dir=str(scratch / "embedding-cache"))
    if model_path and REGISTRY[model_type].kind != "baseline":
        config.model_path = model_path
    if REGISTRY[model_type].learning_rate is not None:
        config.learning_rate = REGISTRY[model_type].learning_rate
    clf: Any = create_classifier(model_type)
    started = time.perf_counter()
    clf.fit(train, val, config, lambda e: None, lambda: False)
    return clf, time.perf_counter() - started


def one_run(model_type: str, seed: int, splits: tuple[Any, Any, Any], labels: list[str],
            multi: bool, epochs: int, scratch: Path, model_path: str | None) -> dict[str, Any]:
    """Train once; the selection's ECE before and after on validation (out of fold) and on
    test, each single method's on test, and the recall thresholds' hold on test."""
    from classification.engine.calibration import fit_calibration
    from classification.engine.decisions import recall_thresholds
    from classification.engine.metrics import encode_labels

    train, val, test = splits
    clf, seconds = _train(model_type, seed, train, val, labels, multi, epochs, scratch,
                          model_path)
    raw_val, raw_test = clf.predict_proba_raw(val.texts), clf.predict_proba_raw(test.texts)
    y_val, y_test = encode_labels(val.labels, labels), encode_labels(test.labels, labels)
    chosen = fit_calibration(prob=raw_val, truth=y_val, multi_label=multi, method="select")
    scores = chosen.selection["candidates"]
    row: dict[str, Any] = {
        "fit_seconds": seconds, "chosen": chosen.chosen,
        "val_before": scores["none"]["ece"], "val_after": scores[chosen.chosen]["ece"],
        "test_before": _ece(raw_test, y_test, multi),
        "test_after": _ece(chosen.apply(raw_test), y_test, multi),
        "val_candidates": {m: s["ece"] for m, s in scores.items()}, "test_methods": {}}
    for method in METHODS:
        cal = fit_calibration(prob=raw_val, truth=y_val, multi_label=multi, method=method)
        row["test_methods"][method] = _ece(cal.apply(raw_test), y_test, multi)
    # The model as trained (the selection): its recall thresholds, set on validation, on test.
    prob_test = clf.predict_proba(test.texts)
    fitted = recall_thresholds(y_val, clf.predict_proba(val.texts), clf.recall_target or 0.95)
    recalls = [float((prob_test[y_test[:, j] == 1, j] >= f["threshold"]).mean())
               for j, f in enumerate(fitted) if f["threshold"] is not None and y_test[:, j].any()]
    row["test_recall_min"] = min(recalls) if recalls else None
    row["macro_f1"] = clf.evaluate(test)["macro_f1"]
    return row


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    def spread(values: list[float]) -> dict[str, Any]:
        return {"per_seed": values, "mean": statistics.fmean(values),
                "sd": statistics.stdev(values) if len(values) > 1 else 0.0}

    out: dict[str, Any] = {column: spread([r[column] for r in runs]) for column in COLUMNS}
    out["chosen"] = [r["chosen"] for r in runs]
    out["test_methods"] = {m: spread([r["test_methods"][m] for r in runs]) for m in METHODS}
    out["val_candidates"] = [r["val_candidates"] for r in runs]
    out["test_recall_min"] = [r["test_recall_min"] for r in runs]
    out["macro_f1"] = [r["macro_f1"] for r in runs]
    out["fit_seconds"] = statistics.fmean(r["fit_seconds"] for r in runs)
    return out


def table_row(model_type: str, summary: dict[str, Any]) -> str:
    """One markdown row: mean ± sd over seeds of each column, the methods chosen, and each
    single method's test ECE for comparison."""
    cells = [f"{summary[c]['mean']:.4f} ± {summary[c]['sd']:.4f}" for c in COLUMNS]
    chosen = ", ".join(summary["chosen"])
    singles = ", ".join(f"{m} {summary['test_methods'][m]['mean']:.4f}" for m in METHODS)
    return (f"| `{model_type}` | {' | '.join(cells)} | {chosen} | {singles} | "
            f"{summary['fit_seconds']:.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--seeds", default="42,43,44")
    parser.add_argument("--epochs", type=int, default=3, help="for minilm (the app's default)")
    parser.add_argument("--dump-splits", default="")
    parser.add_argument("--splits", default="")
    parser.add_argument("--model-path", default=None)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="medlitbot-calibration-"))
    try:
        train, val, test, labels, multi = load_splits(args, scratch)
        if args.dump_splits:
            return
        print(f"demo data: train/validation/test = {len(train)}/{len(val)}/{len(test)}, "
              f"multi_label={multi}; ECE in 15 bins, mean ± sd over seeds {args.seeds}",
              flush=True)
        print("| kind | validation before (none, out of fold) | validation after (chosen, out "
              "of fold) | test before (none) | test after (chosen) | chosen per seed | single "
              "methods on test | fit s |\n|---|---|---|---|---|---|---|---|", flush=True)
        results: dict[str, Any] = {}
        for model_type in args.models.split(","):
            runs = [one_run(model_type, int(seed), (train, val, test), labels, multi,
                            args.epochs, scratch, args.model_path)
                    for seed in args.seeds.split(",")]
            results[model_type] = summary = summarise(runs)
            print(table_row(model_type, summary), flush=True)
        print(json.dumps(results))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
