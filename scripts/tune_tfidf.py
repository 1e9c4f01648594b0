"""Cross-validate the TF-IDF baselines' settings on the app's train + validation rows (issue 39).

The demo CSV is imported the way the app imports it (scripts/evaluate_quality.py's import_file:
seed 42, 80/10/10, iterative stratification); its test rows are never read. The train and
validation rows are pooled and cut into 5 folds by iterative stratification (iterstrat, as the
app's split), once per seed, so each seed is another draw of the folds. In every fold the
other four folds play the app's train + validation: a seeded 1/9 of them (the app's 10 of 90) is
held out as validation, the vectorizer and head are fitted on the rest, and the decision rule is
the app's own (BaseClassifier._tune: temperature calibration, then per-label F1 thresholds, with
the likeliest label when none passes). The held-out fold is then scored with those rules.

The grid is pruned to what two shared cores can run (2,570 articles, 15 folds): the default
run is 7.7 minutes of CPU (28 minutes' wall with --jobs 3 at a load average of 18):
- vectorizers one step away from today's (word 1-2, sublinear tf, min_df 2): word 1-3, and
  char_wb 3-5 beside the words. A vectorizer is fitted once per fold and shared by its heads,
  so heads are cheap and vectorizers are not, and char features cost ten times words. Raw tf
  (raw_tf), min_df 1 and 3 (min_df1, min_df3) run on request (--vectorizers): a full product
  of the options would be 24 vectorizers, and one step at a time shows which option matters.
- logreg heads (0.2 s a fit on words): C 3, 10, 30, 100, class-weighted or not, on every word
  vectorizer; on char features C 10, 30, 100 weighted.
- calibrated SVM heads (3 fits each, the slowest part): C 0.5 and 1.5 on today's words, C 0.5
  (today's) on the others. C 0.2, and 0.5 class-weighted, lost to 0.5 on seed 42's folds in a
  first run (0.857 and 0.866 micro-F1 against 0.870) and were dropped.

Usage: python scripts/tune_tfidf.py [--seeds 42,43,44] [--folds 5] [--splits FILE] [--out F]
       [--vectorizers today,w13,...] [--limit N] [--jobs 3]
       --splits FILE reads the app's split from evaluate_quality.py --dump-splits instead of
       importing (no Django); --limit N keeps the first N pooled rows (a quick look, or a test).
Prints mean micro/macro-F1 over the folds with their spread, per seed and setting; the last
line is one JSON object: {"seeds", "folds", "n_rows", "today": {kind: setting},
"settings": [{"kind", "setting", "vectorizer", "head", "per_seed": {seed: {"micro_f1",
"macro_f1": {"mean", "sd", "folds"}, "fit_seconds"}}, "micro_f1", "macro_f1"}],
"best": {kind: setting}, "verdict": {kind: {"kept", "why", "gain_per_seed", ...}}}.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

# name: the options of baselines._vectorizer that differ from today's defaults
VECTORIZERS: dict[str, dict[str, Any]] = {
    "today": {},
    "w13": {"ngram_max": 3},
    "raw_tf": {"sublinear_tf": False},
    "min_df1": {"min_df": 1},
    "min_df3": {"min_df": 3},
    "char": {"char_ngrams": True},
}
DEFAULT_VECTORIZERS = "today,w13,char"
LOGREG_CS = (3.0, 10.0, 30.0, 100.0)


def heads_for(vec: str) -> list[tuple[str, float, bool]]:
    """(head kind, C, class-weighted) tried on one vectorizer: every logreg C and weighting on
    word features (0.2 s a fit); a calibrated SVM costs 3 fits, and anything on char features
    ten times a word fit, so those get the settings nearest today's."""
    if vec == "char":
        return [*(("tfidf", c, True) for c in LOGREG_CS[1:]), ("svm", 0.5, False)]
    logreg = [("tfidf", c, w) for c in LOGREG_CS for w in (True, False)]
    if vec != "today":
        return [*logreg, ("svm", 0.5, False)]
    return [*logreg, ("svm", 0.5, False), ("svm", 1.5, False)]


KINDS = {"tfidf": "tfidf_logreg", "svm": "tfidf_svm"}


def pooled_rows(*, splits: str, limit: int | None) -> tuple[Any, list[str]]:
    """The app's train + validation rows of the demo data (never its test rows), and labels."""
    from classification.engine.types import TextData

    if splits:
        import _quality_levers as q

        data = q.data_load(Path(splits))
        train, val, labels = data.train, data.val, data.labels
    else:
        from evaluate_quality import DEMO, import_file

        scratch = Path(tempfile.mkdtemp(prefix="medlitbot-tune-"))
        try:
            _dataset, train, val, _test, labels, _multi = import_file(DEMO, scratch)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    pool = TextData(list(train.texts) + list(val.texts), list(train.labels) + list(val.labels))
    keep = [i for i, row in enumerate(pool.labels) if row][:limit]
    return pool.subset(keep), list(labels)


def folds(*, y: np.ndarray, n_folds: int, seed: int) -> list[tuple[np.ndarray, np.ndarray,
                                                                    np.ndarray]]:
    """(fit, validation, held-out) row positions per fold: iterative stratification twice."""
    from iterstrat.ml_stratifiers import MultilabelStratifiedKFold, MultilabelStratifiedShuffleSplit

    out = []
    outer = MultilabelStratifiedKFold(n_splits=n_folds, shuffle=True, random_state=seed)
    for number, (inner, held) in enumerate(outer.split(np.zeros((len(y), 1)), y)):
        # the app keeps 10 of every 90 non-test rows for validation
        cut = MultilabelStratifiedShuffleSplit(n_splits=1, test_size=1 / 9,
                                               random_state=seed * 100 + number)
        fit_rel, val_rel = next(cut.split(np.zeros((len(inner), 1)), y[inner]))
        out.append((inner[np.sort(fit_rel)], inner[np.sort(val_rel)], np.sort(held)))
    return out


def setting_name(kind: str, vec: str, c: float, balanced: bool) -> str:
    return f"{KINDS[kind]} {vec} C={c:g}{' balanced' if balanced else ''}"


def features(*, vec: str, texts: tuple[list[str], ...], cache: dict[str, Any]
             ) -> tuple[Any, Any, Any, float]:
    """(fit, validation, held-out) matrices of one vectorizer fitted on the fit rows, and the
    seconds that fit took. char reuses today's word matrices from `cache`: a FeatureUnion is
    its parts fitted apart and set side by side, so only the char part is new."""
    from scipy.sparse import hstack

    from classification.engine.baselines import _vectorizer

    union = vec == "char" and "today" in cache
    vectorizer = (_vectorizer(**VECTORIZERS[vec]).transformer_list[1][1] if union
                  else _vectorizer(**VECTORIZERS[vec]))
    started = time.perf_counter()
    x_fit = vectorizer.fit_transform(texts[0])
    seconds = time.perf_counter() - started
    out = (x_fit, vectorizer.transform(texts[1]), vectorizer.transform(texts[2]))
    if union:
        words = cache["today"]
        return (*(hstack([w, x]).tocsr() for w, x in zip(words[:3], out, strict=True)),
                words[3] + seconds)
    cache[vec] = (*out, seconds)
    return (*out, seconds)


def fold_scores(*, pool: Any, labels: list[str], rows: tuple[np.ndarray, ...], vec: str,
                seed: int, cache: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every head on one vectorizer in one fold: micro/macro-F1 on the held-out rows, and the
    seconds a job would spend fitting (vectorizer + head)."""
    from classification.engine.baselines import BALANCED, DEFAULT_C, SklearnClassifier, _linear_head
    from classification.engine.metrics import encode_labels
    from classification.engine.types import TrainConfig

    fit, val, held = (pool.subset(r.tolist()) for r in rows)
    x_fit, x_val, x_held, vec_seconds = features(
        vec=vec, texts=(fit.texts, val.texts, held.texts), cache=cache)
    y_fit = encode_labels(fit.labels, labels)
    out = {}
    for kind, c, balanced in heads_for(vec):
        started = time.perf_counter()
        head = _linear_head(kind, True, seed, c, balanced=balanced).fit(x_fit, y_fit)
        seconds = vec_seconds + time.perf_counter() - started
        clf = SklearnClassifier(KINDS[kind])
        clf._setup_labels(fit, val, TrainConfig(label_names=labels, multi_label=True, seed=seed))
        clf.head = head
        # The app's decision rule, tuned on this fold's validation rows.
        clf._tune(val, np.asarray(head.predict_proba(x_val), dtype=np.float64))
        prob = clf.calibration.apply(np.asarray(head.predict_proba(x_held), dtype=np.float64))
        metrics = clf._metrics_from_prob(held, prob)
        is_today = vec == "today" and c == DEFAULT_C[kind] and balanced == BALANCED[kind]
        out[setting_name(kind, vec, c, balanced)] = {
            "micro_f1": float(metrics["micro_f1"]), "macro_f1": float(metrics["macro_f1"]),
            "fit_seconds": seconds, "today": is_today, "kind": kind, "vectorizer": vec,
            "head": {"C": c, "balanced": balanced}}
    return out


def _spread(values: list[float]) -> dict[str, Any]:
    arr = np.asarray(values, dtype=float)
    return {"mean": float(arr.mean()), "sd": float(arr.std(ddof=1)) if len(arr) > 1 else 0.0,
            "folds": [round(float(v), 4) for v in arr]}


def run_seed(*, pool: Any, labels: list[str], seed: int, n_folds: int,
             vectorizers: list[str]) -> dict[str, dict[str, Any]]:
    """Per setting: the fold scores of one seed's draw of the folds."""
    from classification.engine.metrics import encode_labels

    y = encode_labels(pool.labels, labels)
    per_fold: dict[str, list[dict[str, Any]]] = {}
    for number, rows in enumerate(folds(y=y, n_folds=n_folds, seed=seed)):
        cache: dict[str, Any] = {}
        for vec in vectorizers:
            for name, row in fold_scores(pool=pool, labels=labels, rows=rows, vec=vec,
                                         seed=seed, cache=cache).items():
                per_fold.setdefault(name, []).append(row)
        print(f"  seed {seed}: fold {number + 1} of {n_folds} done", flush=True)
    out = {}
    for name, rows in per_fold.items():
        out[name] = {**{k: rows[0][k] for k in ("kind", "vectorizer", "head", "today")},
                     "micro_f1": _spread([r["micro_f1"] for r in rows]),
                     "macro_f1": _spread([r["macro_f1"] for r in rows]),
                     "fit_seconds": float(np.mean([r["fit_seconds"] for r in rows]))}
    return out


def seed_runs(*, pool: Any, labels: list[str], seeds: list[int], n_folds: int,
              vectorizers: list[str], jobs: int) -> dict[int, dict[str, dict[str, Any]]]:
    """run_seed for every seed, `jobs` seeds at a time in their own processes."""
    if jobs <= 1:
        return {seed: run_seed(pool=pool, labels=labels, seed=seed, n_folds=n_folds,
                               vectorizers=vectorizers) for seed in seeds}
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=jobs) as pool_of_processes:
        futures = {seed: pool_of_processes.submit(
            run_seed, pool=pool, labels=labels, seed=seed, n_folds=n_folds,
            vectorizers=vectorizers) for seed in seeds}
        return {seed: future.result() for seed, future in futures.items()}


def verdict(*, settings: list[dict[str, Any]], seeds: list[int]) -> dict[str, Any]:
    """Per kind: its best setting by mean micro-F1 over seeds, kept only when in every seed
    its mean micro-F1 beats today's by more than the spread (sd) of today's fold scores, and
    its macro-F1 is not lower than today's."""
    out: dict[str, Any] = {}
    for kind in KINDS:
        mine = [s for s in settings if s["kind"] == kind]
        today = next(s for s in mine if s["today"])
        best = max(mine, key=lambda s: (s["micro_f1"], s["macro_f1"]))
        gains = {str(seed): best["per_seed"][str(seed)]["micro_f1"]["mean"]
                 - today["per_seed"][str(seed)]["micro_f1"]["mean"] for seed in seeds}
        spreads = {str(seed): today["per_seed"][str(seed)]["micro_f1"]["sd"] for seed in seeds}
        beats = best is not today and all(gains[s] > spreads[s] for s in gains)
        macro_holds = best["macro_f1"] >= today["macro_f1"]
        kept = beats and macro_holds
        why = ("today's setting is the best" if best is today else
               "beats today's by more than the fold spread in every seed" if kept else
               "its macro-F1 is lower than today's" if beats else
               "does not beat today's by more than the fold spread in every seed")
        out[KINDS[kind]] = {"today": today["setting"], "best": best["setting"], "kept": kept,
                            "why": why, "gain_per_seed": gains, "today_fold_sd": spreads,
                            "fit_seconds_today": today["fit_seconds"],
                            "fit_seconds_best": best["fit_seconds"]}
    return out


def summarise(*, by_seed: dict[int, dict[str, dict[str, Any]]], seeds: list[int]
              ) -> list[dict[str, Any]]:
    settings = []
    for name in by_seed[seeds[0]]:
        per_seed = {str(seed): {k: by_seed[seed][name][k]
                                for k in ("micro_f1", "macro_f1", "fit_seconds")}
                    for seed in seeds}
        first = by_seed[seeds[0]][name]
        settings.append({
            "kind": first["kind"], "setting": name, "vectorizer": first["vectorizer"],
            "head": first["head"], "today": first["today"], "per_seed": per_seed,
            "micro_f1": float(np.mean([p["micro_f1"]["mean"] for p in per_seed.values()])),
            "macro_f1": float(np.mean([p["macro_f1"]["mean"] for p in per_seed.values()])),
            "fit_seconds": float(np.mean([p["fit_seconds"] for p in per_seed.values()]))})
    return settings


def table(settings: list[dict[str, Any]], seeds: list[int]) -> str:
    lines = [f"{'setting':42s} " + " ".join(f"{'seed ' + str(s) + ' micro (sd) / macro':>30s}"
                                             for s in seeds) + "   mean micro  macro   fit s"]
    for s in sorted(settings, key=lambda s: (s["kind"], -s["micro_f1"])):
        cells = " ".join(
            f"{p['micro_f1']['mean']:.4f} ({p['micro_f1']['sd']:.4f}) / "
            f"{p['macro_f1']['mean']:.4f}".rjust(30)
            for p in (s["per_seed"][str(seed)] for seed in seeds))
        mark = " *" if s["today"] else ""
        lines.append(f"{(s['setting'] + mark):42s} {cells}   {s['micro_f1']:.4f}  "
                     f"{s['macro_f1']:.4f}  {s['fit_seconds']:6.2f}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", default="42,43,44")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--splits", default="", help="evaluate_quality.py --dump-splits file")
    parser.add_argument("--limit", type=int, default=None, help="keep the first N pooled rows")
    parser.add_argument("--vectorizers", default=DEFAULT_VECTORIZERS,
                        help=f"some of {', '.join(VECTORIZERS)} (today is always run)")
    parser.add_argument("--out", default="", help="also write the JSON here")
    parser.add_argument("--jobs", type=int, default=1,
                        help="seeds run at once, each in its own process (same figures)")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    vectorizers = ["today"] + [v for v in args.vectorizers.split(",")
                               if v.strip() and v != "today"]
    unknown = [v for v in vectorizers if v not in VECTORIZERS]
    if unknown or not seeds or args.folds < 2:
        raise SystemExit(f"unknown vectorizer {unknown}; one of {', '.join(VECTORIZERS)}"
                         if unknown else "give at least one seed and two folds")
    started = time.perf_counter()
    pool, labels = pooled_rows(splits=args.splits, limit=args.limit)
    print(f"{len(pool)} train + validation rows (test rows never read), labels {labels}; "
          f"{args.folds} folds x seeds {seeds}; vectorizers {vectorizers}", flush=True)
    by_seed = seed_runs(pool=pool, labels=labels, seeds=seeds, n_folds=args.folds,
                        vectorizers=vectorizers, jobs=args.jobs)
    settings = summarise(by_seed=by_seed, seeds=seeds)
    print(table(settings, seeds))
    result = {"seeds": seeds, "folds": args.folds, "n_rows": len(pool),
              "seconds": round(time.perf_counter() - started, 1),
              "today": {KINDS[s["kind"]]: s["setting"] for s in settings if s["today"]},
              "settings": settings, "verdict": verdict(settings=settings, seeds=seeds)}
    result["best"] = {kind: v["best"] for kind, v in result["verdict"].items()}
    for kind, v in result["verdict"].items():
        print(f"{kind}: best {v['best']}; {'KEEP' if v['kept'] else 'keep today'} ({v['why']})")
    if args.out:
        Path(args.out).write_text(json.dumps(result), encoding="utf-8")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
