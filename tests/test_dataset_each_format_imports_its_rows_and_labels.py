"""One good small file per format imports with the right rows and labels."""

import pytest

from dataset_management.selectors import dataset_sample_rows
from tests.plugins.datasets import FORMATS

MULTI = ["cardiovascular", "neurological", "oncological"]

CASES = [
    # file, mapping, format, encoding, multi-label
    ("comma.csv", None, "csv", "utf-8", True),
    ("semicolon_bom.csv", None, "csv", "utf-8-sig", True),
    ("pipe.csv", None, "csv", "utf-8", True),
    ("tabs.tsv", None, "tsv", "utf-8", True),
    ("cp1252.csv", None, "csv", "cp1252", True),
    ("articles.xlsx", None, "xlsx", "", True),
    ("array.json", None, "json", "utf-8", True),
    ("lines.jsonl", None, "jsonl", "utf-8", True),
    ("refs.ris", {"label_column": "keywords"}, "ris", "utf-8", True),
    ("pubmed.nbib", {"label_column": "mesh_headings"}, "nbib", "utf-8", True),
]


@pytest.mark.parametrize(("name", "mapping", "fmt", "encoding", "multi"), CASES,
                         ids=[c[0] for c in CASES])
def test_good_file_imports_with_its_rows_and_labels(import_file, name, mapping, fmt, encoding,
                                                     multi):
    ds = import_file(FORMATS / name, mapping=mapping)
    assert (ds.file_format, ds.encoding, ds.row_count) == (fmt, encoding, 12)
    assert ds.label_names == MULTI
    assert ds.is_multilabel is multi
    assert ds.label_counts == {"cardiovascular": 4, "neurological": 5, "oncological": 5}
    assert ds.report["rows_dropped"] == 0
    assert sum(ds.split_sizes.values()) == 12
    third = dataset_sample_rows(dataset=ds, n=3)[2]
    assert third["labels"] == ["cardiovascular", "oncological"]
    assert "tumour spread to the heart" in third["text"]


def test_windows_1252_is_decoded_and_the_detection_recorded(import_file):
    ds = import_file(FORMATS / "cp1252.csv")
    titles = [row["title"] for row in dataset_sample_rows(dataset=ds, n=12)]
    assert "Stroke réhabilitation outcomes" in titles
    assert "Migräne prophylaxis" in titles
    assert ds.report["encoding"] == "cp1252"
    assert "charset-normalizer" in ds.report["encoding_detection"]


def test_wrapped_medline_and_ris_fields_are_joined(import_file):
    ds = import_file(FORMATS / "pubmed.nbib")
    first = dataset_sample_rows(dataset=ds, n=1)[0]
    assert first["abstract"] == "Statin therapy lowered recurrent events."
    assert ds.label_names == []  # MeSH headings are labels only when asked for


def test_numeric_labels_are_named_by_a_label_map(import_file):
    ds = import_file(
        FORMATS / "numeric_labels.csv",
        mapping={"label_map": {"0": "Cardiovascular", "1": "neurological", "2": "oncological"}},
    )
    assert ds.label_names == MULTI
    assert not ds.is_multilabel


def test_numeric_labels_without_a_map_are_kept_with_a_note(import_file):
    ds = import_file(FORMATS / "numeric_labels.csv")
    assert ds.label_names == ["0", "1", "2"]
    assert "Labels are numbers; give a label map to name them." in ds.report["notes"]


def test_an_existing_split_column_is_honoured(import_file):
    ds = import_file(FORMATS / "with_split.csv")
    assert ds.text_fields == ["Title", "Abstract"]  # header names are stripped
    assert ds.split_sizes == {"train": 6, "validation": 3, "test": 3}
    assert not ds.is_multilabel


def test_a_file_without_labels_imports_as_unlabelled(import_file):
    ds = import_file(FORMATS / "unlabelled.csv")
    assert ds.label_names == []
    assert not ds.is_trainable
    assert dataset_sample_rows(dataset=ds, n=1)[0]["labels"] == []
    assert sum(ds.split_sizes.values()) == 12


def test_a_single_class_file_imports_when_asked_for_unlabelled(import_file):
    from tests.plugins.datasets import BAD_INPUTS

    ds = import_file(BAD_INPUTS / "one_class.csv", mapping={"unlabelled": True})
    assert ds.label_names == []
    assert ds.row_count == 5
