from django.core.files.uploadedfile import SimpleUploadedFile

from dataset_management.forms import DatasetUploadForm


def form(data=None, size=100, **fields):
    upload = SimpleUploadedFile("a.csv", b"x" * size)
    base = {"name": "A", "split_ratios": "0.8,0.1,0.1", "seed": 42} | fields
    return DatasetUploadForm(data=base, files={"file": upload})


def test_a_file_over_the_limit_is_refused_by_the_form(settings):
    settings.MAX_UPLOAD_SIZE = 1024 * 1024
    f = form(size=2 * 1024 * 1024)
    assert not f.is_valid()
    assert f.errors["file"] == ["The file is 2.0 MB; the limit is 1 MB."]


def test_ratios_must_add_up_to_one():
    f = form(split_ratios="0.8,0.3,0.1")
    assert not f.is_valid()
    assert f.errors["split_ratios"] == ["Split ratios must add up to 1 (got 1.2)."]


def test_overrides_are_passed_through_only_when_given():
    f = form(label_column="group", label_map='{"0": "cardio"}')
    assert f.is_valid(), f.errors
    assert f.mapping_overrides() == {"label_column": "group", "label_map": {"0": "cardio"}}
    assert f.cleaned_data["split_ratios"] == (0.8, 0.1, 0.1)
