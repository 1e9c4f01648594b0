"""Repeated texts (equal under normalize.text_key) are grouped exactly as a dict of every
row's text would group them (the first row of each text is its group), while the report
builder holds a few bytes a row as rows stream past: a 16-byte digest in a flat array, sorted
once at the end, instead of a dict entry per row (about 150 bytes: 300 MB at the
2,000,000-row cap). Conflicting labels are found per group as before."""

from __future__ import annotations

import random
import tracemalloc

from dataset_management.normalize import text_key
from dataset_management.validation import ReportBuilder

ROWS = 50_000


def texts(rows: int, seed: int) -> list[str]:
    """Texts with repeats written another way (case, spacing, punctuation) and many singles."""
    rng = random.Random(seed)
    out = []
    for _ in range(rows):
        n = rng.randrange(rows // 3)
        form = rng.choice(["Study {n} of the heart.", "STUDY {n} OF THE HEART",
                           "study  {n}, of the heart", "Unique {m} text"])
        out.append(form.format(n=n, m=rng.random()))
    return out


def reference_groups(rows: list[str]) -> list[int]:
    first: dict[str, int] = {}
    return [first.setdefault(text_key(text), i) for i, text in enumerate(rows)]


def test_groups_are_those_of_a_dict_of_every_text() -> None:
    for seed in range(5):
        rows = texts(2_000, seed)
        builder = ReportBuilder()
        for i, text in enumerate(rows):
            builder.keep(row=i + 1, text=text)
        assert builder.groups().tolist() == reference_groups(rows)


def test_conflicting_labels_are_named_per_group_in_the_order_groups_appeared() -> None:
    builder = ReportBuilder()
    rows = ["A b", "c d", "a, B", "C D!", "e", "c-d", "E"]
    labels = [("x",), ("y",), ("x",), ("y", "z"), ("x",), ("y",), ("x",)]
    for i, text in enumerate(rows):
        builder.keep(row=10 + i, text=text)
    duplicates = builder.finish(labels=labels, label_names=["x", "y", "z"],
                                label_matrix=None)["duplicates"]
    assert duplicates["duplicate_rows"] == 4
    assert duplicates["duplicate_groups"] == 3
    assert duplicates["examples"] == [[10, 12], [11, 13, 15], [14, 16]]
    assert duplicates["conflicting_row_ids"] == [[1, 3, 5]]
    assert duplicates["conflicting_file_rows"] == [[11, 13, 15]]


def test_the_builder_holds_a_few_bytes_a_row_while_rows_stream_past() -> None:
    rows = texts(ROWS, 7)
    tracemalloc.start()
    try:
        builder = ReportBuilder()
        for i, text in enumerate(rows):
            builder.keep(row=i + 1, text=text)
        held = tracemalloc.get_traced_memory()[0]
        builder.groups()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # 4 + 4 + 4 bytes of lengths and row numbers, 16 of digest, plus the arrays' growth room.
    assert held / ROWS < 40, f"{held / ROWS:.0f} bytes a row"
    assert peak / ROWS < 100, f"{peak / ROWS:.0f} bytes a row while grouping"
