"""The upload page takes several files at once (an input with `multiple`): they are stored and
queued as one import, which a worker merges into one dataset of the current project with
their duplicates merged and the counts per file on its page; the page follows the import.
Without files, without a name, or with one file whose first records cannot be read, the
page says why at once (naming the file) and nothing is saved or queued."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from dataset_management.collection import COUNTS_KEY
from dataset_management.models import Dataset, ImportJob
from tests.import_support import import_run_last
from tests.plugins.datasets import ROOT, media_files

pytestmark = pytest.mark.django_db

DEDUP = ROOT / "tests" / "fixtures" / "dedup"
FILES = [DEDUP / "pubmed_search.nbib", DEDUP / "embase_search.ris", DEDUP / "scopus_search.csv"]


def upload(client, paths: list[Path], *, follow: bool = True, **fields: str):
    handles = [path.open("rb") for path in paths]
    try:
        return client.post(reverse("datasets:upload_collection"),
                           {"files": handles, **fields}, follow=follow)
    finally:
        for handle in handles:
            handle.close()


def test_the_upload_page_offers_several_files(alice_client) -> None:
    html = alice_client.get(reverse("datasets:upload")).content.decode()
    assert 'name="files" id="collection-files" multiple' in html
    assert reverse("datasets:upload_collection") in html


def test_three_files_make_one_collection(alice_client, media_root) -> None:
    response = upload(alice_client, FILES, follow=False, name="Living review",
                      unlabelled="on")
    queued = ImportJob.objects.get()
    assert response["Location"] == reverse("datasets:import_detail", args=[queued.pk])
    assert Dataset.objects.count() == 0  # the web only stored and queued them
    page = alice_client.get(response["Location"]).content.decode()
    assert "pubmed_search.nbib, embase_search.ris, scopus_search.csv" in page
    job = import_run_last()
    assert job.status == "completed", job.reason
    assert (job.rows_read, job.bytes_read) == (21, sum(p.stat().st_size for p in FILES))
    assert not list((media_root / "imports").rglob("*.*"))  # the stored files are gone
    dataset = Dataset.objects.get()
    assert job.dataset_id == dataset.pk
    html = alice_client.get(reverse("datasets:detail", args=[dataset.pk])).content.decode()
    assert "21 records identified · 6 duplicates removed · 2 near matches" in html
    assert "<td>embase_search.ris</td><td>ris</td><td>8</td><td>3</td><td>5</td><td>1</td>" in html
    assert dataset.project.pk == response.wsgi_request.project.pk
    assert dataset.report[COUNTS_KEY]["duplicates_removed"] == 6
    assert dataset.row_count == 15


@pytest.mark.parametrize(("paths", "fields", "message"), [
    ([], {"name": "X"}, "Choose one or more files."),
    (FILES[:1], {"name": ""}, "Give the collection a name."),
    ([FILES[0], DEDUP.parent / "bad_inputs" / "ris_missing_er.ris"], {"name": "X"},
     "ris_missing_er.ris: RIS record 2 (line 6) has no ER tag: the file is truncated."),
])
def test_a_bad_upload_says_why_and_saves_nothing(alice_client, media_root, paths, fields,
                                                 message) -> None:
    response = upload(alice_client, paths, **fields)
    assert response.status_code == 400
    assert message in response.content.decode().replace("&#x27;", "'")
    assert Dataset.objects.count() == 0
    assert ImportJob.objects.count() == 0
    assert media_files() == set()
