"""A batch created with threshold=recall chooses each article's labels by the model's recall
thresholds: on the same file and model it marks at least as many labels per article as the
default F1 batch, exactly the labels the engine's own predict(threshold="recall") gives, with the
same probabilities; its CSV keeps the F1 batch's columns, and its JSON Lines items say
`threshold` and `calibrated`."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.batch_support import DEMO_SLICE, csv_rows
from tests.threshold_support import batch_run, engine_labels

pytestmark = pytest.mark.django_db


def test_a_recall_batch_marks_at_least_the_f1_labels_and_exactly_the_engines(
        user, media_root, trained_model) -> None:
    f1, _, f1_items = batch_run(owner=user, ml_model=trained_model, path=DEMO_SLICE,
                                threshold="f1")
    recall, _, recall_items = batch_run(owner=user, ml_model=trained_model,
                                        path=DEMO_SLICE, threshold="recall")
    assert (f1.threshold, recall.threshold) == ("f1", "recall")
    assert len(recall_items) == len(f1_items) == 200
    for a, b in zip(f1_items, recall_items, strict=True):
        assert len(b["predicted_labels"]) >= len(a["predicted_labels"]), a["row"]
        assert b["probabilities"] == pytest.approx(a["probabilities"])
    marked = sum(len(item["predicted_labels"]) for item in recall_items)
    assert marked > sum(len(item["predicted_labels"]) for item in f1_items), (
        "on 200 articles the recall thresholds must flag something the F1 ones do not")
    assert [item["predicted_labels"] for item in recall_items] == engine_labels(
        ml_model=trained_model, path=DEMO_SLICE, threshold="recall")
    assert [item["predicted_labels"] for item in f1_items] == engine_labels(
        ml_model=trained_model, path=DEMO_SLICE, threshold="f1")


def test_its_results_say_which_thresholds_and_whether_the_probabilities_are_calibrated(
        user, media_root, trained_model) -> None:
    _, f1_csv, f1_items = batch_run(owner=user, ml_model=trained_model, path=DEMO_SLICE,
                                    threshold="f1")
    _, recall_csv, recall_items = batch_run(owner=user, ml_model=trained_model,
                                            path=DEMO_SLICE, threshold="recall")
    # The demo model's `select` kept no map on its 17 validation rows: nothing recalibrated.
    assert {(i["threshold"], i["calibrated"]) for i in f1_items} == {("f1", False)}
    assert {(i["threshold"], i["calibrated"]) for i in recall_items} == {("recall", False)}
    # The CSV's columns stay as they were: spreadsheets and scripts read them by position.
    assert list(csv_rows(recall_csv)[0]) == list(csv_rows(f1_csv)[0])
    assert "threshold" not in f1_csv.decode("utf-8-sig").splitlines()[0]


def test_predict_out_writes_the_recall_labels_and_says_so(tmp_path: Path,
                                                          trained_model) -> None:
    out = tmp_path / "out.jsonl"
    call_command("predict", str(trained_model.pk), str(DEMO_SLICE), "--out", str(out),
                 "--threshold", "recall", stdout=io.StringIO())
    items = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert {(i["threshold"], i["calibrated"]) for i in items} == {("recall", False)}
    assert [i["predicted_labels"] for i in items] == engine_labels(
        ml_model=trained_model, path=DEMO_SLICE, threshold="recall")
