"""scripts/tune_tfidf.py on a tiny slice of the demo data: it cross-validates only the app's train
and validation rows, scores every setting of its grid per seed with the spread over folds, names
today's defaults as baselines.py has them, and ends with one JSON line whose verdict follows from
its own figures.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from classification.engine.baselines import BALANCED, DEFAULT_C
from classification.engine.data import read_challenge_csv, stratified_split

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "tune_tfidf.py"
SLICE = ROOT / "tests" / "fixtures" / "demo_slice.csv"


def slice_splits(path: Path) -> tuple[int, Path]:
    """The demo slice split 80/10/10, as evaluate_quality.py --dump-splits writes a split; the
    test rows' labels are emptied, so a script that trained or scored on them would fail."""
    data = read_challenge_csv(SLICE)
    train, val, test = stratified_split(data, seed=42)
    splits = {name: {"texts": d.texts, "labels": d.labels}
              for name, d in (("train", train), ("validation", val))}
    splits["test"] = {"texts": test.texts, "labels": [[] for _ in test.texts]}
    path.write_text(json.dumps({"labels": data.label_space(), "multi_label": True, **splits,
                                "metadata": {}}), encoding="utf-8")
    return len(train) + len(val), path


def test_every_setting_is_scored_per_seed_and_the_last_line_is_the_verdict(
        tmp_path: Path) -> None:
    pooled, splits = slice_splits(tmp_path / "splits.json")
    out = tmp_path / "tuning.json"
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--splits", str(splits), "--seeds", "42,43", "--folds",
         "2", "--vectorizers", "today,char", "--out", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert json.loads(out.read_text(encoding="utf-8")) == result
    assert (result["seeds"], result["folds"], result["n_rows"]) == ([42, 43], 2, pooled)

    settings = {s["setting"]: s for s in result["settings"]}
    assert {s["vectorizer"] for s in settings.values()} == {"today", "char"}
    for setting in settings.values():
        for seed in ("42", "43"):
            scores = setting["per_seed"][seed]
            for figure in ("micro_f1", "macro_f1"):
                folds = scores[figure]["folds"]
                assert len(folds) == 2
                assert all(0.0 <= f <= 1.0 for f in folds)
                assert min(folds) - 1e-4 <= scores[figure]["mean"] <= max(folds) + 1e-4
                assert scores[figure]["sd"] >= 0.0
            assert scores["fit_seconds"] > 0.0

    # Today's setting per kind is the one baselines.py builds by default.
    today = {s["kind"]: s for s in settings.values() if s["today"]}
    assert set(today) == {"tfidf", "svm"}
    for kind, setting in today.items():
        assert setting["vectorizer"] == "today"
        assert setting["head"] == {"C": DEFAULT_C[kind], "balanced": BALANCED[kind]}
    assert result["today"] == {"tfidf_logreg": today["tfidf"]["setting"],
                               "tfidf_svm": today["svm"]["setting"]}

    for name, verdict in result["verdict"].items():
        mine = [s for s in settings.values() if s["setting"].startswith(name + " ")]
        best = max(mine, key=lambda s: (s["micro_f1"], s["macro_f1"]))
        assert verdict["best"] == result["best"][name] == best["setting"]
        assert verdict["today"] == result["today"][name]
        for seed, gain in verdict["gain_per_seed"].items():
            expected = (best["per_seed"][seed]["micro_f1"]["mean"]
                        - settings[verdict["today"]]["per_seed"][seed]["micro_f1"]["mean"])
            assert abs(gain - expected) < 1e-9
        beats = all(gain > verdict["today_fold_sd"][seed]
                    for seed, gain in verdict["gain_per_seed"].items())
        holds = best["macro_f1"] >= settings[verdict["today"]]["macro_f1"]
        assert verdict["kept"] == (best["setting"] != verdict["today"] and beats and holds)
