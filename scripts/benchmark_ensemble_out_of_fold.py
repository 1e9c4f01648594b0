#!/usr/bin/env python
"""An ensemble tuned on its members' out-of-fold probabilities against one tuned on the
validation split, both scored on held-out rows, over several splits (issue 39).

For each seed: N rows drawn at random are held out, the rest split 80/10/10 as the app does.
Each kind is fitted at its defaults as a search fits it: five folds over train and validation
(the search's own, search_scoring.folds) give its out-of-fold probabilities, and its kept model
(fitted on train) takes its calibration and rules from them. Then two ensembles of the same
members: the baseline tuned on the validation split (what a search did before), and one tuned
on the out-of-fold rows (what it does now). Every model is scored on the held-out rows.

Beside each kind's kept model (refitted on train, as a search keeps it), the bag of its five
fold models (their raw probabilities averaged, through the kept model's calibration): a lever
not built. And beside every ECE, its noise floor on these rows: the ECE a perfectly calibrated
model with the same confidences shows (each row right with the probability it states), mean and
95th percentile over 1,000 draws.

    cd scripts && DJANGO_SETTINGS_MODULE=medlitbot_project.settings_test \
      ../.venv/bin/python benchmark_ensemble_out_of_fold.py --csv PATH --heldout-rows 888 \
      [--seeds 42,13,7] [--kinds tfidf_logreg,tfidf_svm,minilm_embed_logreg,tfidf_minilm_svm]

Last line: one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from typing import Any

import numpy as np
from benchmark_search_trust import labels_of, split_with_heldout

KINDS = "tfidf_logreg,tfidf_svm,minilm_embed_logreg,tfidf_minilm_svm"


def setup_django() -> None:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "medlitbot_project.settings_test")
    django.setup()


def as_a_search_fits(kind: str, split: tuple[Any, Any, Any], labels: list[str],
                     shared: dict[str, Any]) -> tuple[Any, np.ndarray, list[Any]]:
    """(the kept model, its calibrated out-of-fold probabilities, the fold models), as
    SearchRun._score makes them for a kind's default trial."""
    from classification.engine import metadata_rows, search_scoring
    from classification.engine.registry import get_spec
    from classification.ml_models import TrainConfig

    train, val, _ = split
    pool = metadata_rows.pooled(train, val)
    folds = search_scoring.folds(pool, seed=42)
    config = TrainConfig(label_names=labels, multi_label=False)

    def candidate() -> Any:
        clf = get_spec(kind).classifier_class()(kind, None)
        for name, value in shared.items():
            if hasattr(clf, name):
                setattr(clf, name, value)
        if hasattr(clf, "rules_folds"):
            clf.rules_folds = 0
        return clf

    raws, fold_models = [], []
    for fit_rows, held in folds:
        fold = candidate()
        fold.fit(pool.subset(fit_rows), pool.subset(held), config, lambda e: None, lambda: False)
        raws.append(fold.predict_proba_raw(pool.subset(held).texts))
        fold_models.append(fold)
    raw = np.concatenate(raws)
    clf = candidate()
    clf.fit(train, val, config, lambda e: None, lambda: False)
    clf.rules_out_of_fold(data=pool.subset([i for _, rows in folds for i in rows]), raw=raw,
                          val=val)
    return clf, clf.calibration.apply(raw), fold_models


def scored(prob: np.ndarray, truth: np.ndarray) -> dict[str, float]:
    """Accuracy (argmax, as single-label prediction without offsets would choose), top-label
    ECE, and that ECE's noise floor on these rows."""
    from classification.engine.calibration import expected_calibration_error

    confidence, chosen = prob.max(axis=1), prob.argmax(axis=1)
    rng = np.random.default_rng(0)
    floor = [expected_calibration_error(confidence, rng.random(len(confidence)) < confidence)
             for _ in range(1000)]
    return {"argmax_accuracy": round(float((chosen == truth.argmax(axis=1)).mean()), 4),
            "ece": round(expected_calibration_error(confidence, chosen == truth.argmax(axis=1)),
                         4),
            "ece_floor_mean": round(float(np.mean(floor)), 4),
            "ece_floor_p95": round(float(np.percentile(floor, 95)), 4)}


def scores(model: Any, test: Any) -> dict[str, float]:
    found = model.evaluate(test)
    return {"accuracy": round(float(found["accuracy"]), 4), "ece": round(float(found["ece"]), 4)}


def one_seed(seed: int, csv: str, heldout: int, kinds: list[str]) -> dict[str, Any]:
    from classification.engine import metadata_rows, search_scoring
    from classification.engine.ensemble import EnsembleClassifier, TunedOn
    from classification.engine.feature_memo import FeatureMemo
    from classification.engine.metrics import encode_labels
    from classification.ml_models import TrainConfig

    split = split_with_heldout(csv, heldout, seed=seed)
    train, val, test = split
    labels = labels_of(train, val)
    shared = {"shared_cache": {}, "feature_memo": FeatureMemo()}
    members, oofs, row = [], [], {"seed": seed, "kinds": {}}
    truth = encode_labels(test.labels, labels)
    for kind in kinds:
        started = time.perf_counter()
        clf, oof, fold_models = as_a_search_fits(kind, split, labels, shared)
        members.append(clf)
        oofs.append(oof)
        bag = clf.calibration.apply(np.mean([m.predict_proba_raw(test.texts)
                                             for m in fold_models], axis=0))
        row["kinds"][kind] = {**scores(clf, test),
                              "kept": scored(clf.predict_proba(test.texts), truth),
                              "bag_of_folds": scored(bag, truth),
                              "seconds": round(time.perf_counter() - started)}
    pool = metadata_rows.pooled(train, val)
    rows = pool.subset([i for _, held in search_scoring.folds(pool, seed=42) for i in held])
    config = TrainConfig(label_names=labels, multi_label=False)
    out_of_fold = TunedOn(texts=list(rows.texts), truth=encode_labels(rows.labels, labels),
                          probs=oofs)
    for name, tuned in (("on_validation", None), ("out_of_fold", out_of_fold)):
        ensemble = EnsembleClassifier.from_members(members, val=val, config=config,
                                                   out_of_fold=tuned)
        row[name] = {**scores(ensemble, test), "weights": ensemble.weights,
                     **{f"ece_floor_{k}": v for k, v in scored(
                         ensemble.predict_proba(test.texts), truth).items()
                        if k.startswith("ece_floor")}}
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", required=True)
    parser.add_argument("--heldout-rows", type=int, default=888)
    parser.add_argument("--seeds", default="42,13,7")
    parser.add_argument("--kinds", default=KINDS)
    args = parser.parse_args()
    setup_django()
    results = []
    for seed in [int(s) for s in args.seeds.split(",")]:
        row = one_seed(seed, args.csv, args.heldout_rows, args.kinds.split(","))
        results.append(row)
        gain = row["out_of_fold"]["accuracy"] - row["on_validation"]["accuracy"]
        print(f"seed {seed}: " + ", ".join(f"{k} {v['accuracy']:.4f}"
                                           for k, v in row["kinds"].items())
              + f"; ensemble tuned on validation {row['on_validation']['accuracy']:.4f} "
              f"(ECE {row['on_validation']['ece']:.3f}), out of fold "
              f"{row['out_of_fold']['accuracy']:.4f} (ECE {row['out_of_fold']['ece']:.3f}): "
              f"{gain:+.4f}", flush=True)
    for kind in args.kinds.split(","):
        kept = [r["kinds"][kind]["kept"] for r in results]
        bag = [r["kinds"][kind]["bag_of_folds"] for r in results]
        print(f"{kind}: argmax accuracy kept {np.mean([k['argmax_accuracy'] for k in kept]):.4f}"
              f", bag of folds {np.mean([b['argmax_accuracy'] for b in bag]):.4f}; ECE kept "
              f"{np.mean([k['ece'] for k in kept]):.3f}, bag {np.mean([b['ece'] for b in bag]):.3f}"
              f"; ECE of a perfectly calibrated model here "
              f"{np.mean([k['ece_floor_mean'] for k in kept]):.3f} (95th percentile "
              f"{np.mean([k['ece_floor_p95'] for k in kept]):.3f})")
    gains = [r["out_of_fold"]["accuracy"] - r["on_validation"]["accuracy"] for r in results]
    print(f"mean accuracy gain of tuning out of fold: {np.mean(gains):+.4f} over "
          f"{len(gains)} splits")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
