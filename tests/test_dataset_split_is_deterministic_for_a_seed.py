import pyarrow.parquet as pq
from django.conf import settings

from tests.plugins.datasets import DEMO_CSV, FORMATS


def splits(ds):
    return pq.read_table(f"{settings.MEDIA_ROOT}/{ds.rows_path}").column("split").to_pylist()


def test_the_same_seed_gives_the_same_split(import_file, other_user, user):
    a = import_file(DEMO_CSV, owner=user, seed=7)
    b = import_file(DEMO_CSV, owner=other_user, seed=7)
    assert splits(a) == splits(b)
    assert a.split_seed == b.split_seed == 7


def test_another_seed_gives_another_split(import_file, other_user, user):
    a = import_file(FORMATS / "tabs.tsv", owner=user, seed=1)
    b = import_file(FORMATS / "tabs.tsv", owner=other_user, seed=2)
    assert splits(a) != splits(b)


def test_custom_ratios_are_stored_and_applied(import_file):
    ds = import_file(DEMO_CSV, split_ratios=(0.7, 0.2, 0.1))
    assert ds.split_ratios == {"train": 0.7, "validation": 0.2, "test": 0.1}
    # Iterative stratification trades exact sizes for label balance: within a few rows.
    for name, ratio in ds.split_ratios.items():
        assert abs(ds.split_sizes[name] / 2855 - ratio) < 0.01
