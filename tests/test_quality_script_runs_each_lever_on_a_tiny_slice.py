"""scripts/evaluate_quality.py --levers on a tiny corpus whose label only the journal tells: each
lever is run alone and combined over two seeds and reported as mean and spread; the metadata
lever really reaches the model (its recorded fields, and a score text alone cannot get); a lever
that does not apply to TF-IDF or that the code lacks is reported with its reason, never scored.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.metadata_support import journal_corpus, journal_csv

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "evaluate_quality.py"
LEVERS = "none,calibration,metadata,tapt,self_training,all"
FIGURES = ("micro_f1", "macro_f1", "ece_before", "ece_after", "fit_seconds")


def run_script(*args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    env.update(MEDIA_ROOT=str(tmp_path / "media"), TMPDIR=str(tmp_path))
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=240)


def test_each_lever_runs_alone_and_combined_with_mean_and_spread(tmp_path: Path) -> None:
    data = journal_csv(tmp_path / "journals.csv", journal_corpus(120, seed=3))
    out = tmp_path / "levers.json"
    done = run_script("--levers", LEVERS, "--models", "tfidf_logreg", "--seeds", "42,43",
                      "--data", str(data), "--out", str(out), tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert json.loads(out.read_text()) == result
    assert set(result["availability"]) == {"calibration", "metadata", "tapt", "self_training"}
    rows = result["models"]["tfidf_logreg"]
    assert list(rows) == LEVERS.split(",")

    for name in ("none", "calibration", "metadata", "all"):
        row = rows[name]
        assert row["status"] == "measured", (name, row)
        for figure in FIGURES:
            stats = row[figure]
            assert len(stats["per_seed"]) == 2
            assert stats["min"] <= stats["mean"] <= stats["max"]
            assert stats["sd"] >= 0

    assert (rows["none"]["levers_used"], rows["none"]["calibration"],
            rows["none"]["metadata_used"]) == ([], "none", [])
    # The calibration lever is the app's default, select, which names the map it kept.
    assert rows["calibration"]["calibration"].startswith("select")
    assert rows["calibration"]["metadata_used"] == []
    # The model records the fields it was trained with, as a training job's would.
    assert rows["metadata"]["metadata_used"] == ["journal", "mesh"]
    assert rows["metadata"]["calibration"] == "none"
    # Only the journal tells the label: text alone is near chance, the journal lifts it.
    assert rows["metadata"]["macro_f1"]["mean"] > rows["none"]["macro_f1"]["mean"] + 0.2
    assert rows["all"]["levers_used"] == ["calibration", "metadata", "self_training"]
    assert rows["all"]["metadata_used"] == ["journal", "mesh"]

    assert rows["tapt"]["status"] == "not run"
    assert rows["tapt"]["left_out"]["tapt"].startswith("not applicable")
    assert "micro_f1" not in rows["tapt"]
    # Self-training: 30% of the training rows keep their labels, the rest are its unlabelled
    # texts; the row says what it did and what the labelled part alone scored.
    assert result["availability"]["self_training"] is None
    row = rows["self_training"]
    assert (row["status"], row["levers_used"]) == ("measured", ["self_training"])
    for seed_run in row["self_training"]:
        assert seed_run["labelled"] + seed_run["unlabelled"] == result["n_train"]
        assert abs(seed_run["labelled"] - 0.3 * result["n_train"]) <= 1
        assert len(seed_run["validation_macro_f1"]) == 1 + len(seed_run["rows_added"]) <= 3
        assert 0 <= seed_run["kept_round"] <= len(seed_run["rows_added"])
        assert 0.0 <= seed_run["labelled_only_macro_f1"] <= 1.0
    assert "training rows labelled (30%)" in row["note"]


def test_an_unknown_lever_is_refused_by_name(tmp_path: Path) -> None:
    done = run_script("--levers", "none,distillation", "--models", "tfidf_logreg",
                      tmp_path=tmp_path)
    assert done.returncode != 0
    assert "Unknown lever distillation" in done.stderr
