"""An error after the files were moved into place rolls everything back."""

import pytest

from dataset_management import placement, services
from dataset_management.models import Dataset
from tests.plugins.datasets import FORMATS, media_files


def test_an_error_after_the_files_moved_removes_them_and_the_row(import_file, monkeypatch):
    real_place = placement._place
    calls = []

    def place_then_fail(source, target, placed):
        real_place(source, target, placed)
        calls.append(target)
        if len(calls) == 2:
            raise OSError("disk full")

    monkeypatch.setattr(placement, "_place", place_then_fail)
    before = media_files()
    with pytest.raises(OSError, match="disk full"):
        import_file(FORMATS / "comma.csv")
    assert len(calls) == 2
    assert Dataset.objects.count() == 0
    assert media_files() == before


def test_an_error_while_writing_rows_leaves_no_temp_files(import_file, monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("interrupted")

    monkeypatch.setattr(services, "_write_rows", boom)
    before = media_files()
    with pytest.raises(RuntimeError):
        import_file(FORMATS / "comma.csv")
    assert Dataset.objects.count() == 0
    assert media_files() == before
