"""Rows whose texts are the same article (equal once case, spacing and punctuation are set
aside) always land in one split, whatever the seed, single- or multi-label; the report counts
them, and a file whose own split column separates such rows is warned about."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from dataset_management.normalize import text_key
from dataset_management.selectors import dataset_rows_iter
from dataset_management.splitting import split_assign

pytestmark = pytest.mark.django_db

VARIANTS = ["Statin therapy lowers LDL cholesterol.", "statin  therapy lowers ldl cholesterol",
            "STATIN THERAPY, LOWERS LDL-CHOLESTEROL!", "Statin\ttherapy lowers LDL cholesterol"]


def write_csv(path: Path, rows: list[tuple[str, str]], *, split: list[str] | None = None) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["abstract", "label", *(["split"] if split else [])])
        for i, (text, label) in enumerate(rows):
            out.writerow([text, label, *([split[i]] if split else [])])
    return path


def corpus(multi: bool) -> list[tuple[str, str]]:
    labels = ["cardio", "neuro", "onco"]
    rows = [(f"Article {i} about {labels[i % 3]} topic number {i}.",
             f"{labels[i % 3]}|{labels[(i + 1) % 3]}" if multi and i % 4 == 0 else labels[i % 3])
            for i in range(120)]
    for k in range(6):  # six articles, each repeated in four spellings
        base = f"Repeated article {k}: " + VARIANTS[k % 4]
        spellings = [base, base.upper(), base.lower().replace(" ", "  "), base + " ..."]
        rows += [(s, labels[k % 3]) for s in spellings]
    return rows


def test_case_spacing_and_punctuation_variants_have_one_key() -> None:
    assert len({text_key(v) for v in VARIANTS}) == 1
    assert text_key("Ｆｕｌｌ　ｗｉｄｔｈ") == "full width"
    assert text_key("heart failure") != text_key("heart failures")


@pytest.mark.parametrize("multi", [False, True])
@pytest.mark.parametrize("seed", [1, 7, 42, 1234])
def test_repeated_texts_sit_in_one_split(import_file, tmp_path, multi, seed) -> None:
    path = write_csv(tmp_path / "articles.csv", corpus(multi))
    dataset = import_file(path, seed=seed)
    by_key: dict[str, set[str]] = {}
    for row in dataset_rows_iter(dataset=dataset):
        by_key.setdefault(text_key(row["text"]), set()).add(row["split"])
    assert all(len(splits) == 1 for splits in by_key.values())
    assert sum(len(s) for s in by_key.values()) == len(by_key)
    report = dataset.report
    assert report["duplicates"]["duplicate_groups"] == 6
    assert report["duplicates"]["duplicate_rows"] == 18
    assert any("distinct texts were split" in note for note in report["split"]["notes"])
    sizes = dataset.split_sizes
    assert sizes["validation"] > 0
    assert sizes["test"] > 0


def test_the_grouped_split_keeps_every_group_whole_for_any_grouping() -> None:
    rng = np.random.default_rng(0)
    groups = rng.integers(0, 60, size=300)
    y = np.eye(3, dtype=np.uint8)[groups % 3]
    codes = split_assign(label_matrix=y, multilabel=False, ratios=(0.8, 0.1, 0.1), seed=3,
                         groups=groups).codes
    for group in np.unique(groups):
        assert len(set(codes[groups == group].tolist())) == 1


def test_a_file_whose_split_column_separates_repeats_is_warned_about(
        import_file, tmp_path) -> None:
    rows = [*corpus(False)[:30], (VARIANTS[0], "cardio"), (VARIANTS[1], "cardio")]
    split = ["train"] * 20 + ["validation"] * 5 + ["test"] * 5 + ["train", "test"]
    dataset = import_file(write_csv(tmp_path / "fixed.csv", rows, split=split))
    notes = dataset.report["split"]["notes"]
    assert any("1 text(s) appear in more than one of the file's splits" in n for n in notes)
