"""simulate_screening compares stopping rules and rankers in one run (issue 36): one JSON object
per combination, and the last line is the default ranker and rule, the object scripts read."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command

from screening import ranker, stopping_rules

pytestmark = pytest.mark.django_db


def _collection(tmp_path):
    """160 records, 40 relevant, whose words tell them apart: a slice with a known truth."""
    path = tmp_path / "slice.csv"
    rng_words = ["trial", "cohort", "dose", "patients", "outcome", "survey", "review"]
    with path.open("w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle)
        out.writerow(["title", "abstract", "included"])
        for i in range(160):
            relevant = i % 4 == 0
            topic = "statin therapy lowers cholesterol" if relevant else "asthma inhaler use"
            out.writerow([f"Record {i} {topic}",
                          f"{topic} {rng_words[i % 7]} {rng_words[(i * 3) % 7]} number {i}",
                          int(relevant)])
    return path


def test_every_rule_and_ranker_gets_a_line_and_the_default_comes_last(tmp_path) -> None:
    out = io.StringIO()
    target = tmp_path / "last.json"
    call_command("simulate_screening", csv=str(_collection(tmp_path)), label="included",
                 seeds=2, every=5, patience=10, rule=["all"],
                 ranker=[ranker.DEFAULT_RANKER, "logreg"],
                 json_out=str(target), stdout=out)
    lines = [json.loads(line) for line in out.getvalue().strip().splitlines()]
    assert {(s["ranker"], s["rule"]) for s in lines} == {
        (r, rule) for r in (ranker.DEFAULT_RANKER, "logreg") for rule in stopping_rules.RULES}
    last = lines[-1]
    assert (last["ranker"], last["rule"]) == (ranker.DEFAULT_RANKER,
                                              stopping_rules.DEFAULT_RULE)
    assert json.loads(target.read_text()) == last
    for summary in lines:
        assert {"mean_wss_at_95", "mean_screened_at_stop", "min_recall_at_stop",
                "reached_target", "runs"} <= set(summary)
        assert (summary["records"], summary["relevant"]) == (160, 40)
        assert summary["min_recall_at_stop"] == min(r["recall_at_stop"] for r in summary["runs"])
        assert summary["reached_target"] == sum(r["recall_at_stop"] >= 0.95
                                                for r in summary["runs"])


def test_without_options_there_is_one_line_the_default(tmp_path) -> None:
    out = io.StringIO()
    call_command("simulate_screening", csv=str(_collection(tmp_path)), label="included",
                 seeds=1, every=5, patience=10, stdout=out)
    lines = out.getvalue().strip().splitlines()
    assert len(lines) == 1
    assert json.loads(lines[0])["rule"] == stopping_rules.DEFAULT_RULE


def test_an_unknown_rule_is_refused_with_the_ones_there_are(tmp_path) -> None:
    with pytest.raises(CommandError, match="Unknown knee"):
        call_command("simulate_screening", csv=str(_collection(tmp_path)), label="included",
                     rule=["knee"])
