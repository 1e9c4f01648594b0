"""A batch cut into shards (more articles than BATCH_SHARD_ROWS) ends with exactly the files the
one-piece run writes: the same CSV and JSON Lines, byte for byte, rows in file order, the same
counts, and nothing left beside them (no shard input, part or checkpoint, no upload)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from classification.batches import storage
from classification.batches.runner import batch_job_run
from classification.models import BatchShard
from tests.batch_support import DEMO_SLICE, batch_files, create_batch, csv_rows, input_rows

pytestmark = pytest.mark.django_db


def articles_with_ids(tmp_path: Path) -> Path:
    """The demo slice with a pmid column and one article without any text (skipped)."""
    rows = input_rows(DEMO_SLICE)
    lines = ["pmid;title;abstract"]
    for number, row in enumerate(rows, start=1):
        title, abstract = (row["title"], row["abstract"]) if number != 77 else ("", "")
        lines.append(";".join([str(30_000_000 + number), title.replace(";", ","),
                               abstract.replace(";", ",")]))
    path = tmp_path / "articles.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run(settings, user, model, path: Path, *, shard_rows: int, top_terms: bool = False):
    settings.BATCH_SHARD_ROWS = shard_rows
    batch = create_batch(owner=user, ml_model=model, path=path)
    if top_terms:
        type(batch).objects.filter(pk=batch.pk).update(top_terms=True)
    assert batch_job_run(batch_id=batch.pk.hex) == "completed"
    batch.refresh_from_db()
    folder = storage.absolute(batch.result_path).parent
    return batch, (folder / storage.RESULT_NAME).read_bytes(), (
        folder / storage.RECORDS_NAME).read_bytes()


@pytest.mark.parametrize("top_terms", [False, True])
def test_a_sharded_batch_writes_byte_for_byte_what_the_one_piece_run_writes(
        settings, user, media_root, tmp_path, trained_model, top_terms) -> None:
    path = articles_with_ids(tmp_path)
    whole, whole_csv, whole_jsonl = run(settings, user, trained_model, path, shard_rows=10_000,
                                        top_terms=top_terms)
    assert whole.shard_count == 0, "200 articles under the limit run in one piece"
    cut, cut_csv, cut_jsonl = run(settings, user, trained_model, path, shard_rows=37,
                                  top_terms=top_terms)
    assert cut.shard_count == 6
    shards = list(BatchShard.objects.filter(batch=cut).order_by("index"))
    assert [(s.first_row, s.last_row) for s in shards] == [
        (1, 34), (35, 68), (69, 102), (103, 136), (137, 170), (171, 200)]
    assert {s.status for s in shards} == {"completed"}
    assert sum(s.processed for s in shards) == 200
    assert cut_csv == whole_csv
    assert cut_jsonl == whole_jsonl
    assert (cut.total, cut.processed, cut.skipped) == (whole.total, whole.processed,
                                                       whole.skipped) == (200, 200, 1)
    written = csv_rows(cut_csv)
    assert [r["row"] for r in written] == [str(i) for i in range(1, 201)]
    assert [r["id"] for r in written][:2] == ["30000001", "30000002"]
    assert written[76]["note"] == "skipped: no text"
    assert [json.loads(line)["row"] for line in cut_jsonl.splitlines()] == list(range(1, 201))
    assert batch_files(cut) == {storage.RESULT_NAME, storage.RECORDS_NAME}
    assert (cut.leader, cut.reason) == ("", "")
