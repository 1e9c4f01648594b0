from collections import Counter

from dataset_management.selectors import dataset_split_examples


def test_each_split_keeps_every_label_near_its_overall_share(demo_dataset):
    overall = {name: count / demo_dataset.row_count
               for name, count in demo_dataset.label_counts.items()}
    assert demo_dataset.report["split"]["method"] == "iterative_stratification"
    for split in ("train", "validation", "test"):
        data = dataset_split_examples(dataset=demo_dataset, split=split)
        counts = Counter(label for labels in data.labels for label in labels)
        for name, share in overall.items():
            assert abs(counts[name] / len(data.texts) - share) < 0.02, (split, name)
