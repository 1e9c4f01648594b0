"""An RIS file whose KW field holds a few repeated classes (a screening team's include/exclude,
as reference managers keep them) gets KW as its label column, in the preview and the import;
free keywords, with as many values as records, are still not taken for labels."""

from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from dataset_management.preview import dataset_preview
from tests.plugins.datasets import FORMATS

SCREENED = FORMATS / "screened_kw_labels.ris"


def test_the_preview_offers_ris_keywords_as_the_label_column(media_root):
    upload = SimpleUploadedFile(SCREENED.name, SCREENED.read_bytes())
    preview = dataset_preview(uploaded_file=upload, mapping_overrides=None)
    assert preview.format == "ris"
    assert preview.mapping["label"] == "keywords"
    assert preview.report["label_counts_in_sample"] == {"include": 3, "exclude": 3}


def test_the_upload_page_shows_the_keyword_labels_not_no_labels(alice_client, media_root):
    with SCREENED.open("rb") as f:
        response = alice_client.post(reverse("datasets:upload"), {
            "name": "Screened", "split_ratios": "0.5,0.25,0.25", "seed": 1, "file": f,
        })
    page = response.content.decode()
    assert response.status_code == 200
    assert 'id="no-label-warning"' not in page
    assert 'id="preview-labels"' in page
    assert "<td>include</td>" in page


def test_an_import_with_no_options_uses_the_keywords_as_labels(import_file):
    dataset = import_file(SCREENED)
    assert dataset.label_field == "keywords"
    assert sorted(dataset.label_names) == ["exclude", "include"]


def test_free_keywords_with_a_value_per_record_are_not_taken_for_labels(media_root):
    records = "".join(
        f"TY  - JOUR\nTI  - Title {i}\nAB  - Abstract number {i} about a topic.\n"
        f"KW  - keyword {i}\nKW  - other {i}\nER  - \n\n"
        for i in range(8)
    )
    upload = SimpleUploadedFile("free.ris", records.encode())
    preview = dataset_preview(uploaded_file=upload, mapping_overrides=None)
    assert preview.mapping["label"] is None
