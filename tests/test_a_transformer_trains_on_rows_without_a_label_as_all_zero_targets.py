"""The transformer kinds' BCE head learns from a multi-label row without a label as all-zero
targets: the row stays in training, the model may then give no label, and its metrics count
every row, those without a label included."""

from __future__ import annotations

from pathlib import Path

from classification.engine.types import TextData
from classification.ml_models import TrainConfig, create_classifier, load_classifier
from tests.no_label_support import FIXTURE


def fixture_rows() -> TextData:
    import csv

    with FIXTURE.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    none = {"none", "no label"}
    return TextData([f"{r['title']}\n\n{r['abstract']}" for r in rows],
                    [[x for x in r["labels"].split("|") if x and x.lower() not in none]
                     for r in rows])


def test_rows_without_a_label_stay_in_training_and_in_the_metrics(
        tiny_bert_dir: Path, tmp_path: Path) -> None:
    data = fixture_rows()
    train, val = data.subset(list(range(0, 100))), data.subset(list(range(100, 120)))
    assert any(not row for row in train.labels)
    assert any(not row for row in val.labels)
    clf = create_classifier("custom")
    clf.fit(train, val, TrainConfig(model_path=str(tiny_bert_dir), epochs=2, batch_size=16,
                                    learning_rate=3e-3, early_stopping_patience=0,
                                    max_length=64, multi_label=True), lambda _: None,
            lambda: False)
    assert clf.allows_no_label
    measured = clf.evaluate(val)
    assert (measured["rows_scored"], measured["rows_total"], measured["n"]) == (20, 20, 20)
    clf.save(str(tmp_path / "model"))
    loaded = load_classifier(str(tmp_path / "model"))
    assert loaded.allows_no_label
    # No row is forced to a label: with thresholds of 1, every text gets none.
    loaded.thresholds = [1.0] * len(loaded.label_names)
    assert loaded.predict(["Hospital billing survey."])[0]["labels"] == []
