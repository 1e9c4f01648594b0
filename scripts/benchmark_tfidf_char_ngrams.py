"""Fit, save and load times of the TF-IDF baselines with words only and with char n-grams beside.

Usage: python scripts/benchmark_tfidf_char_ngrams.py [--repeats 3] [--models tfidf_logreg,...]
       [--variants words,chars,chars:max_features=20000:max_df=0.5] [--old-union-save 300]

Trains on the demo CSV's rows (90% train, 10% validation, split by a fixed shuffle: timing only,
not quality; scripts/evaluate_quality.py scores quality), saves the artifact and loads it back,
checking the loaded model's probabilities equal the trained one's, and times predicting the
validation rows. A variant is words (no char n-grams), chars (the default) or chars with the
char member's parameters changed (chars:max_features=20000:max_df=0.5). The variants take turns
within each repeat, in a rotated order, so a busy neighbour slows all alike; the report is each
variant's median and its ratio to words. --old-union-save N also times one skops dump of a
union fitted on N training rows as sklearn_files wrote it before (every vocabulary a JSON node
per term), and the compact dump of the same union, for reference.
Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import statistics
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "demo_data" / "medlit_challenge.csv"


def _data() -> tuple[Any, Any, list[str]]:
    from classification.ml_models import TextData

    with DEMO.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter=";"))
    random.Random(42).shuffle(rows)
    texts = [f"{r['title']}. {r['abstract']}" for r in rows]
    labels = [r["group"].split("|") for r in rows]
    cut = len(rows) * 9 // 10
    names = sorted({label for row in labels for label in row})
    return TextData(texts[:cut], labels[:cut]), TextData(texts[cut:], labels[cut:]), names


def _variant(name: str) -> tuple[bool, dict[str, float]]:
    """(char n-grams on, the char member's parameters) for a variant's name: a value with a
    point is a fraction (max_df=0.5 of the documents), one without a count (min_df=5)."""
    kind, *settings = name.split(":")
    params = {key: float(value) if "." in value else int(value)
              for key, value in (item.split("=") for item in settings)}
    return kind == "chars", params


def _run(model_type: str, variant: str, data: tuple[Any, Any, list[str]],
         folder: Path) -> dict[str, float]:
    import numpy as np

    from classification.engine import baselines
    from classification.ml_models import TrainConfig, create_classifier, load_classifier

    train, val, names = data
    char_ngrams, params = _variant(variant)
    original = baselines._vectorizer

    def bounded(**kwargs: Any) -> Any:
        vectorizer = original(**kwargs)
        return vectorizer.set_params(**{f"chars__{k}": v for k, v in params.items()}) \
            if params and kwargs.get("char_ngrams") else vectorizer

    baselines.CHAR_NGRAMS = char_ngrams
    baselines._vectorizer = bounded
    try:
        clf = create_classifier(model_type)
        started = time.perf_counter()
        clf.fit(train, val, TrainConfig(label_names=names, multi_label=True),
                lambda _event: None, lambda: False)
        fit = time.perf_counter() - started
    finally:
        baselines._vectorizer = original
    target = folder / f"{model_type}-{variant.replace(':', '-')}"
    started = time.perf_counter()
    clf.save(str(target))
    save = time.perf_counter() - started
    started = time.perf_counter()
    loaded = load_classifier(str(target))
    load = time.perf_counter() - started
    started = time.perf_counter()
    prob = loaded.predict_proba_raw(val.texts)
    predict = time.perf_counter() - started
    same = np.array_equal(prob, clf.predict_proba_raw(val.texts))
    return {"fit_s": fit, "save_s": save, "load_s": load, "predict_s": predict,
            "identical": float(same), "file_mb": (target / "model.skops").stat().st_size / 1e6,
            "features": float(len(clf.vectorizer.get_feature_names_out()))}


def _old_union_save(data: tuple[Any, Any, list[str]], rows: int, folder: Path
                    ) -> dict[str, float]:
    from classification.engine.baselines import _vectorizer
    from classification.engine.sklearn_files import _skops_io, parts_save

    union = _vectorizer(char_ngrams=True).fit(data[0].texts[:rows])
    started = time.perf_counter()
    _skops_io().dump({"vectorizer": union}, folder / "old.skops",
                     compression=zipfile.ZIP_DEFLATED, compresslevel=1)
    old = time.perf_counter() - started
    started = time.perf_counter()
    parts_save(folder=folder, parts={"vectorizer": union})
    new = time.perf_counter() - started
    return {"rows": rows, "terms": float(len(union.get_feature_names_out())),
            "old_save_s": old, "compact_save_s": new,
            "old_mb": (folder / "old.skops").stat().st_size / 1e6,
            "compact_mb": (folder / "model.skops").stat().st_size / 1e6}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--models", default="tfidf_logreg,tfidf_svm")
    parser.add_argument("--variants", default="words,chars")
    parser.add_argument("--old-union-save", type=int, default=0, metavar="ROWS")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    data = _data()
    variants = args.variants.split(",")
    print(f"{len(data[0])} train / {len(data[1])} validation rows", flush=True)
    report: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="medlitbot-charngrams-") as scratch:
        if args.old_union_save:
            report["old_union_save"] = _old_union_save(data, args.old_union_save, Path(scratch))
            print(f"union saved the old way: {report['old_union_save']}", flush=True)
        for model_type in args.models.split(","):
            runs: dict[str, list[dict[str, float]]] = {v: [] for v in variants}
            for repeat in range(args.repeats):
                shift = repeat % len(variants)
                for variant in variants[shift:] + variants[:shift]:
                    run = _run(model_type, variant, data, Path(scratch))
                    runs[variant].append(run)
                    print(f"{model_type} {variant} #{repeat + 1}: "
                          + "  ".join(f"{k} {v:.3f}" for k, v in run.items()), flush=True)
            medians = {v: {k: statistics.median(r[k] for r in found) for k in found[0]}
                       for v, found in runs.items()}
            ratios = {v: {k: medians[v][k] / medians["words"][k]
                          for k in ("fit_s", "save_s", "load_s", "predict_s", "file_mb")}
                      for v in variants if v != "words" and "words" in medians}
            report[model_type] = {"medians": medians, "ratio_to_words": ratios}
            for v, r in ratios.items():
                print(f"{model_type} {v} / words: "
                      + "  ".join(f"{k} {x:.2f}" for k, x in r.items()), flush=True)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
