import pytest

from dataset_management.models import Dataset
from dataset_management.readers import DatasetFileError
from tests.plugins.datasets import FORMATS, media_files


def test_the_same_file_twice_names_the_existing_dataset(import_file):
    first = import_file(FORMATS / "comma.csv", name="First")
    before = media_files()
    with pytest.raises(DatasetFileError) as caught:
        import_file(FORMATS / "comma.csv", filename="renamed.csv", name="Second")
    assert caught.value.message == (
        f"This file was already uploaded as dataset 'First' (id {first.pk})."
    )
    assert Dataset.objects.count() == 1
    assert media_files() == before


def test_another_owner_may_upload_the_same_file(import_file, other_user):
    mine = import_file(FORMATS / "comma.csv")
    theirs = import_file(FORMATS / "comma.csv", owner=other_user)
    assert mine.content_hash == theirs.content_hash
    assert mine.original_file.name == theirs.original_file.name
    assert mine.rows_path != theirs.rows_path
