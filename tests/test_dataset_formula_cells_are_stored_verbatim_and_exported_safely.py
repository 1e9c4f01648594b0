import csv
import io

from dataset_management.export import csv_safe_cell, write_safe_csv
from dataset_management.selectors import dataset_sample_rows
from tests.plugins.datasets import BAD_INPUTS


def test_formula_cells_are_stored_verbatim(import_file):
    ds = import_file(BAD_INPUTS / "formula_cells.csv")
    rows = dataset_sample_rows(dataset=ds, n=8)
    assert [r["title"][0] for r in rows] == list("=+-@=+-@")
    assert rows[0]["title"] == "=cmd|' /C calc'!A0"


def test_every_exported_formula_cell_is_neutralised(import_file):
    ds = import_file(BAD_INPUTS / "formula_cells.csv")
    rows = dataset_sample_rows(dataset=ds, n=8)
    out = io.StringIO()
    write_safe_csv([["title", "abstract", "labels"]]
                   + [[r["title"], r["abstract"], r["labels"]] for r in rows], out)
    exported = list(csv.reader(io.StringIO(out.getvalue())))[1:]
    assert len(exported) == 8
    for cell in (c for row in exported for c in row[:2]):
        assert cell.startswith("'"), cell
    assert exported[0][0] == "'=cmd|' /C calc'!A0"


def test_plain_values_and_numbers_pass_unchanged():
    assert csv_safe_cell("Heart failure") == "Heart failure"
    assert csv_safe_cell(-1.5) == "-1.5"
    assert csv_safe_cell(None) == ""
    assert csv_safe_cell(["a", "b"]) == "a|b"
    assert csv_safe_cell(" =1+1") == "' =1+1"
    assert csv_safe_cell("\t=1") == "'\t=1"
