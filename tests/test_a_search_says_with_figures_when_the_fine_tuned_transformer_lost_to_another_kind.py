"""A search whose fine-tuned transformer scores below another kind says so in its report, with
both scores and the gap, so nobody reads the transformer's absence from the top as untried."""

from __future__ import annotations

import re
from pathlib import Path

from classification.engine.search import SearchClassifier
from classification.engine.types import TextData
from classification.ml_models import TrainConfig


def test_the_report_names_the_transformer_the_kind_ahead_of_it_and_both_scores(
        demo_split: tuple[TextData, TextData, TextData], tiny_bert_dir: Path,
        tmp_path: Path) -> None:
    train, val, _ = demo_split
    config = TrainConfig.from_dict({"time_budget_minutes": 3, "search_ensemble": False,
                                    "search_candidates": ["tfidf_logreg", "custom"]})
    config.label_names = sorted(set(train.label_space()) | set(val.label_space()))
    config.multi_label, config.output_dir = True, str(tmp_path)
    config.model_path = str(tiny_bert_dir)
    done: set[str] = set()

    def seen(event: dict) -> None:
        done.update(row["model_type"] for row in event.get("leaderboard", [])
                    if row["state"] == "complete")

    search = SearchClassifier().fit(train, val, config, seen,
                                    lambda: {"tfidf_logreg", "custom"} <= done)["search"]

    best = {}
    for row in search["trial_rows"]:
        if row["value"] is not None:
            best[row["model_type"]] = max(best.get(row["model_type"], 0.0), row["value"])
    # An untrained-looking tiny BERT against TF-IDF: the transformer loses.
    assert best["custom"] < best["tfidf_logreg"], best
    said = search["transformer"]
    match = re.search(r"custom \(trial \d+\), scored macro-F1 (\d\.\d{3}), (\d\.\d{3}) below "
                      r"tfidf_logreg \(trial \d+, (\d\.\d{3})\)", said)
    assert match, said
    mine, gap, theirs = (float(v) for v in match.groups())
    assert (mine, theirs) == (round(best["custom"], 3), round(best["tfidf_logreg"], 3))
    assert abs(gap - (theirs - mine)) <= 0.0015
    assert said.startswith("Within the 3.0-minute budget")
