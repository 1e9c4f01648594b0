def test_report_counts_drops_duplicates_and_length_stats(import_file, tmp_path):
    path = tmp_path / "messy.csv"
    path.write_text(
        "title,abstract,label\n"
        "A,Heart attack,cardiovascular\n"
        "B,Brain tumour,neurological|oncological\n"
        "A,Heart attack,neurological\n"          # same text, other label
        ",,cardiovascular\n"                      # no text
        "C,Seizures,\n"                           # no label: dropped, as asked
        "D,Too,many,fields\n"
        "E,Lung cancer,Oncological\n"
        "F,Stroke unit,NEUROLOGICAL \n"
    )
    report = import_file(path, mapping={"no_label_rows": "drop"}).report
    assert report["rows_read"] == 8
    assert report["rows_kept"] == 5
    assert report["dropped_by_reason"] == {
        "empty text": 1, "no label": 1, "wrong shape: has 4 fields": 1,
    }
    assert report["dropped_examples"][0] == {"row": 5, "reason": "empty text"}
    assert report["duplicates"]["duplicate_rows"] == 1
    assert report["duplicates"]["conflicting_label_groups"] == 1
    assert report["duplicates"]["conflicting_examples"] == [[2, 4]]
    assert report["label_counts"] == {"cardiovascular": 1, "neurological": 3, "oncological": 2}
    assert report["multilabel"] is True
    assert report["cooccurrence"]["matrix"][1][2] == 1
    assert set(report["rare_labels"]) == {"cardiovascular", "oncological"}
    words = report["text_length"]["words"]
    assert (words["min"], words["max"]) == (3, 3)
    assert report["text_length"]["chars"]["max"] == len("B\n\nBrain tumour")
    assert set(words) == {"min", "median", "mean", "p95", "max"}
