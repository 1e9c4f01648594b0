from dataset_management.selectors import dataset_split_examples


def test_demo_file_imports_with_zero_configuration(demo_dataset):
    ds = demo_dataset
    assert ds.row_count == 2855
    assert ds.label_names == ["cardiovascular", "hepatorenal", "neurological", "oncological"]
    assert ds.is_multilabel
    assert ds.file_format == "csv"
    assert ds.encoding == "utf-8-sig"
    assert ds.text_fields == ["title", "abstract"]
    assert ds.label_field == "group"
    assert ds.report["label_separator"] == "|"
    assert ds.report["delimiter"] == "semicolon"
    for name, ratio in {"train": 0.8, "validation": 0.1, "test": 0.1}.items():
        assert abs(ds.split_sizes[name] / 2855 - ratio) < 0.01
    assert sum(ds.split_sizes.values()) == 2855
    assert ds.split_seed == 42


def test_demo_rows_follow_the_parquet_contract(demo_dataset):
    import pyarrow.parquet as pq
    from django.conf import settings

    table = pq.read_table(f"{settings.MEDIA_ROOT}/{demo_dataset.rows_path}")
    assert table.column_names == ["row_id", "title", "abstract", "text", "labels", "split",
                                  "identifiers", "citation", "record"]
    first = table.slice(0, 1).to_pylist()[0]
    assert first["row_id"] == 0
    assert first["text"] == f"{first['title']}\n\n{first['abstract']}"
    assert first["labels"] == ["neurological", "hepatorenal"]


def test_split_examples_return_texts_and_labels(demo_dataset):
    val = dataset_split_examples(dataset=demo_dataset, split="validation")
    assert len(val.texts) == len(val.labels) == demo_dataset.split_sizes["validation"]
    assert all(isinstance(t, str) and t for t in val.texts)
    assert all(labels for labels in val.labels)
