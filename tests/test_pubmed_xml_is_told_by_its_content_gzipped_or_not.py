"""PubMed XML is found by its content, not its name: a .xml.gz (gzip's magic number, then the
PubmedArticleSet inside), a file saved as .txt or with no extension. Every door takes it: the
upload page's preview, import_dataset, the reader. A gzip of anything else is refused by name."""

from __future__ import annotations

import gzip
import io

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from dataset_management.models import Dataset
from dataset_management.readers import GZIP_REFUSED, DatasetFileError, sniff_format
from tests.plugins.datasets import FORMATS, media_files

pytestmark = pytest.mark.django_db
EFETCH = FORMATS / "pubmed_efetch.xml"


@pytest.fixture
def gzipped(tmp_path):
    path = tmp_path / "pubmed_efetch.xml.gz"
    path.write_bytes(gzip.compress(EFETCH.read_bytes()))
    return path


@pytest.mark.parametrize("filename", ["pubmed.xml.gz", "download", "pubmed.csv", "efetch.txt"])
def test_a_gzipped_file_is_read_whatever_its_name(import_file, gzipped, filename):
    dataset = import_file(gzipped, filename=filename)
    assert (dataset.file_format, dataset.row_count) == ("pubmed_xml", 2)
    assert dataset.report["format"] == "pubmed_xml"


@pytest.mark.parametrize("filename", ["efetch.xml", "efetch.txt", "efetch.csv", "efetch"])
def test_plain_pubmed_xml_is_read_whatever_its_name(tmp_path, filename):
    assert sniff_format(EFETCH, filename=filename) == "pubmed_xml"


def test_a_gzip_of_something_else_is_refused_and_nothing_kept(import_file, tmp_path):
    path = tmp_path / "articles.csv.gz"
    path.write_bytes(gzip.compress(b"title,abstract\nA,B\n"))
    with pytest.raises(DatasetFileError) as caught:
        import_file(path)
    assert caught.value.message == GZIP_REFUSED
    assert Dataset.objects.count() == 0
    assert media_files() == set()


def test_import_dataset_takes_the_gzipped_file(gzipped, media_root, user):
    out = io.StringIO()
    call_command("import_dataset", str(gzipped), "--name", "PubMed", "--owner", user.username,
                 stdout=out)
    dataset = Dataset.objects.get()
    assert (dataset.file_format, dataset.row_count) == ("pubmed_xml", 2)
    assert out.getvalue().rstrip().endswith(f"dataset_id={dataset.pk}")


def test_a_truncated_gzip_fails_in_one_line(gzipped, media_root, user):
    gzipped.write_bytes(gzipped.read_bytes()[:-200])
    with pytest.raises(CommandError, match=r"^The \.xml\.gz file is truncated"):
        call_command("import_dataset", str(gzipped), "--name", "X", "--owner", user.username)
    assert Dataset.objects.count() == 0


def test_the_upload_page_previews_it(alice_client, gzipped, media_root):
    with gzipped.open("rb") as f:
        response = alice_client.post(reverse("datasets:upload"), {
            "name": "PubMed", "split_ratios": "0.8,0.1,0.1", "seed": 1, "file": f,
        })
    page = response.content.decode()
    assert response.status_code == 200
    assert "The treatment of AIDS behind the walls of correctional facilities." in page
    assert "not supported" not in page
