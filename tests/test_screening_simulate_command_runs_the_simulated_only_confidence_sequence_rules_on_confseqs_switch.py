"""simulate_screening --rule confseq_zero / confseq_beside (issue 51): each gets its own line,
switches where confseq switches (the same ranked phase), claims the target only where its bound
allows, and the truth is at least the claim; the ranked reading beside the sample is counted
in the records read."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db


def _collection(tmp_path):
    """300 records, 30 relevant, a few of them worded like the irrelevant ones."""
    path = tmp_path / "slice.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle)
        out.writerow(["title", "abstract", "included"])
        for i in range(300):
            relevant = i % 10 == 0
            topic = ("statin therapy lowers cholesterol" if relevant and i % 70
                     else "asthma inhaler use")
            out.writerow([f"Record {i} {topic}", f"{topic} number {i}", int(relevant)])
    return path


def test_each_rule_claims_no_more_than_the_truth_from_confseqs_switch(tmp_path) -> None:
    out = io.StringIO()
    call_command("simulate_screening", csv=str(_collection(tmp_path)), label="included",
                 seeds=3, every=5, rule=["confseq", "confseq_zero", "confseq_beside"],
                 stdout=out)
    lines = {s["rule"]: s for s in (json.loads(line)
                                    for line in out.getvalue().strip().splitlines())}
    assert set(lines) == {"confseq", "confseq_zero", "confseq_beside"}
    switches = [r["ranked_phase"] for r in lines["confseq"]["runs"]]
    for rule in ("confseq_zero", "confseq_beside"):
        assert [r["ranked_phase"] for r in lines[rule]["runs"]] == switches
        for run in lines[rule]["runs"]:
            assert run["stopped"]
            assert run["claimable_recall"] >= 0.95
            assert run["recall_at_stop"] >= run["claimable_recall"] - 1e-4
    for run in lines["confseq_beside"]["runs"]:
        # every record read after the switch is a ranked one or a paid draw
        assert run["beside"] <= run["sampled"] <= run["beside"] + run["drawn"]
