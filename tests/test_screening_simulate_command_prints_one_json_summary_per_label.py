"""simulate_screening replays a session on a labelled dataset with the session's ranker and
stopping rule; its last line is the JSON summary the issue specifies."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db


def test_the_last_line_is_the_summary_with_one_run_per_seed(team, tmp_path) -> None:  # noqa: F811
    out = io.StringIO()
    target = tmp_path / "sim.json"
    call_command("simulate_screening", dataset=team.dataset.pk, label="oncological", seeds=3,
                 every=2, patience=3, json_out=str(target), stdout=out)
    summary = json.loads(out.getvalue().strip().splitlines()[-1])
    assert json.loads(target.read_text()) == summary
    assert [r["seed"] for r in summary["runs"]] == [0, 1, 2]
    for run in summary["runs"]:
        assert {"screened_at_stop", "recall_at_stop", "wss_at_95"} <= set(run)
        assert 0 < run["screened_at_stop"] <= 1
    assert summary["min_recall_at_stop"] == min(r["recall_at_stop"] for r in summary["runs"])
    assert {"mean_wss_at_95", "mean_screened_at_stop"} <= set(summary)


def test_an_unknown_label_is_refused_with_the_labels_it_has(team) -> None:  # noqa: F811
    with pytest.raises(CommandError, match="no label 'dermatology'"):
        call_command("simulate_screening", dataset=team.dataset.pk, label="dermatology")
