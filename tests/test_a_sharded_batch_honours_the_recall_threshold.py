"""A batch cut into shards (more articles than BATCH_SHARD_ROWS) created with threshold=recall
classifies every shard with the recall thresholds: its results are byte for byte those of the
same batch run in one piece, and its labels are the engine's own predict(threshold="recall")."""

from __future__ import annotations

import pytest

from classification.models import BatchShard
from tests.batch_support import DEMO_SLICE
from tests.threshold_support import batch_run, engine_labels

pytestmark = pytest.mark.django_db


def test_every_shard_uses_the_recall_thresholds(settings, user, media_root,
                                                trained_model) -> None:
    settings.BATCH_SHARD_ROWS = 10_000
    whole, whole_csv, whole_items = batch_run(owner=user, ml_model=trained_model,
                                              path=DEMO_SLICE, threshold="recall")
    assert whole.shard_count == 0
    settings.BATCH_SHARD_ROWS = 37
    cut, cut_csv, cut_items = batch_run(owner=user, ml_model=trained_model, path=DEMO_SLICE,
                                        threshold="recall")
    assert cut.shard_count == 6
    assert set(BatchShard.objects.filter(batch=cut).values_list("status", flat=True)) == {
        "completed"}
    assert cut_csv == whole_csv
    assert cut_items == whole_items
    # The demo model's `select` kept no map on its 17 validation rows: nothing recalibrated.
    assert {(i["threshold"], i["calibrated"]) for i in cut_items} == {("recall", False)}
    assert [i["predicted_labels"] for i in cut_items] == engine_labels(
        ml_model=trained_model, path=DEMO_SLICE, threshold="recall")


def test_a_sharded_recall_batch_differs_from_its_f1_twin_only_by_more_labels(
        settings, user, media_root, trained_model) -> None:
    settings.BATCH_SHARD_ROWS = 37
    _, _, f1_items = batch_run(owner=user, ml_model=trained_model, path=DEMO_SLICE,
                               threshold="f1")
    _, _, recall_items = batch_run(owner=user, ml_model=trained_model, path=DEMO_SLICE,
                                   threshold="recall")
    for a, b in zip(f1_items, recall_items, strict=True):
        assert len(b["predicted_labels"]) >= len(a["predicted_labels"]), a["row"]
    assert sum(len(i["predicted_labels"]) for i in recall_items) > sum(
        len(i["predicted_labels"]) for i in f1_items)
