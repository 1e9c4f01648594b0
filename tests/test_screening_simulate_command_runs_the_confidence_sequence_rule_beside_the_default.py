"""simulate_screening --rule confseq (issue 36): the confidence-sequence rule gets its own line
with its bound on the relevant records left, and the last line is still the default rule's."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import call_command

from screening import stopping_rules

pytestmark = pytest.mark.django_db


def _collection(tmp_path):
    """200 records, 40 relevant, whose words tell them apart: a slice with a known truth."""
    path = tmp_path / "slice.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle)
        out.writerow(["title", "abstract", "included"])
        for i in range(200):
            relevant = i % 5 == 0
            topic = "statin therapy lowers cholesterol" if relevant else "asthma inhaler use"
            out.writerow([f"Record {i} {topic}", f"{topic} number {i}", int(relevant)])
    return path


def test_the_confseq_line_carries_its_bound_and_the_default_stays_last(tmp_path) -> None:
    out = io.StringIO()
    target = tmp_path / "last.json"
    call_command("simulate_screening", csv=str(_collection(tmp_path)), label="included",
                 seeds=2, every=5, patience=10, rule=["confseq", stopping_rules.DEFAULT_RULE],
                 json_out=str(target), stdout=out)
    lines = [json.loads(line) for line in out.getvalue().strip().splitlines()]
    assert [s["rule"] for s in lines][-1] == stopping_rules.DEFAULT_RULE
    assert json.loads(target.read_text()) == lines[-1]
    confseq = next(s for s in lines if s["rule"] == "confseq")
    assert (confseq["records"], confseq["relevant"]) == (200, 40)
    assert confseq["min_recall_at_stop"] == min(r["recall_at_stop"] for r in confseq["runs"])
    for run in confseq["runs"]:
        assert run["left_upper"] >= 0
        # the stop is claimed only where the bound allows it, and the truth is at least that
        if run["stopped"]:
            assert run["claimable_recall"] >= 0.95
        assert run["recall_at_stop"] >= run["claimable_recall"] - 1e-4 or not run["stopped"]
