"""PubMed XML is refused by name, with what to export instead, at every door (the upload page,
import_dataset), whatever its extension; never "No abstract or text column found (columns:
<?xml ...)". Other XML or HTML is named as unsupported too."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from dataset_management.models import Dataset
from dataset_management.preview import dataset_preview
from dataset_management.readers import PUBMED_XML_REFUSED, XML_REFUSED, DatasetFileError
from tests.plugins.datasets import BAD_INPUTS

PUBMED_XML = BAD_INPUTS / "pubmed_export.xml"


def test_the_message_says_it_is_not_supported_and_what_to_export():
    assert PUBMED_XML_REFUSED.startswith("PubMed XML is not supported yet; export as RIS or CSV")


@pytest.mark.parametrize("filename", ["pubmed_export.xml", "pubmed_export.csv", "pubmed.txt"])
def test_import_refuses_pubmed_xml_by_name_whatever_its_extension(import_file, filename):
    with pytest.raises(DatasetFileError) as caught:
        import_file(PUBMED_XML, filename=filename)
    assert caught.value.message == PUBMED_XML_REFUSED
    assert Dataset.objects.count() == 0


def test_the_upload_page_names_pubmed_xml_as_unsupported(alice_client, media_root):
    with PUBMED_XML.open("rb") as f:
        response = alice_client.post(reverse("datasets:upload"), {
            "name": "PubMed", "split_ratios": "0.8,0.1,0.1", "seed": 1, "file": f,
        })
    page = response.content.decode()
    assert "PubMed XML is not supported yet; export as RIS or CSV" in page
    assert "No abstract or text column found" not in page
    assert Dataset.objects.count() == 0


def test_import_dataset_fails_in_one_line_naming_pubmed_xml(media_root, user):
    with pytest.raises(CommandError) as caught:
        call_command("import_dataset", str(PUBMED_XML), "--name", "X", "--owner", "alice")
    assert str(caught.value) == PUBMED_XML_REFUSED
    assert Dataset.objects.count() == 0


def test_other_xml_and_html_are_named_as_unsupported(import_file, tmp_path):
    for name, body in (("data.xml", b'<?xml version="1.0"?><rows><row/></rows>'),
                       ("page.csv", b"<!DOCTYPE html><html><body>Search results</body></html>")):
        path = tmp_path / name
        path.write_bytes(body)
        with pytest.raises(DatasetFileError) as caught:
            import_file(path)
        assert caught.value.message == XML_REFUSED


def test_a_csv_of_pubmed_records_is_still_read(media_root):
    body = b"title,abstract,source\nA,An abstract about pubmedarticle tags,pubmed\n"
    preview = dataset_preview(uploaded_file=SimpleUploadedFile("a.csv", body),
                              mapping_overrides=None)
    assert preview.format == "csv"
