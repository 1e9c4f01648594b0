from django.core.files.uploadedfile import SimpleUploadedFile

from dataset_management.preview import dataset_preview
from tests.plugins.datasets import DEMO_CSV, media_files


def test_preview_of_the_demo_shows_format_mapping_and_first_rows(media_root):
    upload = SimpleUploadedFile("medlit_challenge.csv", DEMO_CSV.read_bytes())
    preview = dataset_preview(uploaded_file=upload, mapping_overrides=None)
    assert (preview.format, preview.encoding) == ("csv", "utf-8-sig")
    assert preview.columns == ["title", "abstract", "group"]
    assert preview.mapping["label"] == "group"
    assert preview.mapping["label_separator"] == "|"
    assert preview.rows[0]["labels"] == ["neurological", "hepatorenal"]
    assert len(preview.rows) == 10
    assert preview.report["rows_sampled"] == 1000
    assert media_files() == set()
