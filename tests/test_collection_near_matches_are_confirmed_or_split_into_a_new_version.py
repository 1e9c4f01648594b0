"""A collection's near matches (same title, another year or first author) are listed on their
page with both records side by side. A person confirms a pair as one article, which makes a
new version of the dataset with that pair merged (identifiers and source files kept, the
counts carried on), and splits another, which leaves the list and is not listed again when
files are later added. A merge (a new version written from the stored rows) runs on a worker
as an import job; splits alone are applied at once. The original dataset is never rewritten; a
viewer sees the pairs but may not decide; a bad decision changes nothing and queues nothing."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from dataset_management.collection import COUNTS_KEY
from dataset_management.models import Dataset, ImportJob
from dataset_management.selectors import dataset_rows_iter
from projects import services as project_services
from tests.import_support import import_run_last
from tests.job_support import dataset_digest
from tests.plugins.datasets import ROOT

pytestmark = pytest.mark.django_db

DEDUP = ROOT / "tests" / "fixtures" / "dedup"
FILES = [DEDUP / "pubmed_search.nbib", DEDUP / "embase_search.ris", DEDUP / "scopus_search.csv"]
ATRIAL = "atrial fibrillation screening with wearable devices"
VITAMIN = "vitamin d supplementation and fracture risk in postmenopausal women"


@pytest.fixture
def collection(media_root, user) -> Dataset:
    team = project_services.project_create(user=user, name="Living review team")
    call_command("import_dataset", *map(str, FILES), "--name", "Review", "--owner", "alice",
                 "--project", str(team.pk), "--unlabelled", stdout=StringIO())
    return Dataset.objects.get()


def pair_index(dataset: Dataset, title: str) -> int:
    titles = {row["row_id"]: row["title"].casefold().rstrip(".")
              for row in dataset_rows_iter(dataset=dataset)}
    pairs = dataset.report[COUNTS_KEY]["near_matches"]
    return next(i for i, pair in enumerate(pairs) if titles[pair["rows"][0]] == title)


def test_confirm_one_pair_and_split_another(collection, alice_client, tmp_path) -> None:
    before = dataset_digest(collection)
    page = alice_client.get(reverse("datasets:near_matches", args=[collection.pk]))
    html = page.content.decode()
    assert page.status_code == 200
    assert "2 pairs that a rule matched but something kept apart" in html
    assert "different year (2019 / 2021)" in html
    assert "different first author" in html
    assert "from pubmed_search.nbib" in html
    assert "pmid 31000007" in html
    detail = alice_client.get(reverse("datasets:detail", args=[collection.pk])).content.decode()
    assert reverse("datasets:near_matches", args=[collection.pk]) in detail
    assert "21 records identified · 6 duplicates removed · 2 near matches" in detail
    assert 'id="add-files-form"' in detail

    atrial, vitamin = pair_index(collection, ATRIAL), pair_index(collection, VITAMIN)
    response = alice_client.post(reverse("datasets:near_matches", args=[collection.pk]),
                                 {f"pair_{atrial}": "merge", f"pair_{vitamin}": "split"})
    # A merge writes a new version from the stored rows: a worker's job, the page follows it.
    job = import_run_last()
    assert response.status_code == 302
    assert response["Location"] == reverse("datasets:import_detail", args=[job.pk])
    assert job.status == "completed", job.reason
    version = Dataset.objects.latest("pk")
    assert job.dataset_id == version.pk != collection.pk
    assert job.rows_read == 14
    assert version.row_count == collection.row_count - 1 == 14
    counts = version.report[COUNTS_KEY]
    assert counts["near_matches"] == []
    assert (counts["records_identified"], counts["duplicates_removed"]) == (21, 7)
    # What PRISMA reads: every record of the files, the version's merge among the drops.
    assert (version.report["rows_read"], version.report["rows_dropped"]) == (21, 7)
    assert counts["merged_by"]["confirmed"] == 1
    assert len(counts["split_pairs"]) == 1
    merged = [r for r in dataset_rows_iter(dataset=version)
              if r["title"].casefold().rstrip(".") == ATRIAL]
    assert len(merged) == 1
    assert merged[0]["identifiers"]["pmid"] == "31000007"
    assert merged[0]["record"]["source_files"] == ["pubmed_search.nbib", "embase_search.ris"]
    assert dataset_digest(Dataset.objects.get(pk=collection.pk)) == before  # never rewritten

    # Files added later, by a worker: the pair split stays split, the merged one stays merged.
    with (DEDUP / "scopus_search.csv").open("rb") as handle:
        same = alice_client.post(reverse("datasets:add_files", args=[version.pk]),
                                 {"files": [handle]})
    refused = import_run_last()
    assert same["Location"] == reverse("datasets:import_detail", args=[refused.pk])
    assert (refused.status, refused.reason) == ("failed", (
        "The files add nothing to dataset 'Review (near matches merged)' "
        f"(id {version.pk}): every record and identifier in them is already there."))
    assert Dataset.objects.latest("pk").pk == version.pk
    grown = add_files(alice_client, version, tmp_path)
    counts = grown.report[COUNTS_KEY]
    assert grown.row_count == 15  # one new article; a second copy of the Patel study merged
    assert counts["near_matches"] == []
    assert (counts["records_identified"], counts["duplicates_removed"]) == (23, 8)
    assert (grown.report["rows_read"], grown.report["rows_dropped"]) == (23, 8)
    assert counts["files"][-1] == {"name": "update.ris", "format": "ris", "identified": 2,
                                   "duplicates_removed": 1, "added": 1, "near_matches": 0,
                                   "dropped": {}}
    assert counts["articles_added"] == 1
    assert [f["name"] for f in counts["files"]] == [p.name for p in FILES] + ["update.ris"]


def add_files(client, dataset: Dataset, tmp_path) -> Dataset:
    update = tmp_path / "update.ris"
    update.write_text(
        "TY  - JOUR\nTI  - Vitamin D supplementation and fracture risk in postmenopausal "
        "women\nAB  - Again.\nAU  - Patel, A\nPY  - 2017\nER  - \n\n"
        "TY  - JOUR\nTI  - A new trial of aspirin for primary prevention in diabetes\n"
        "AB  - Aspirin did not lower events.\nPY  - 2024\nER  - \n", encoding="utf-8")
    with update.open("rb") as handle:
        response = client.post(reverse("datasets:add_files", args=[dataset.pk]),
                               {"files": [handle]})
    job = import_run_last()
    assert response["Location"] == reverse("datasets:import_detail", args=[job.pk])
    assert job.status == "completed", job.reason
    grown = Dataset.objects.latest("pk")
    assert job.dataset_id == grown.pk != dataset.pk
    assert job.name == f"{dataset.name} (+ update.ris)"
    return grown


def test_only_splits_update_the_list_in_place(collection, alice_client) -> None:
    vitamin = pair_index(collection, VITAMIN)
    alice_client.post(reverse("datasets:near_matches", args=[collection.pk]),
                      {f"pair_{vitamin}": "split"})
    collection.refresh_from_db()
    assert Dataset.objects.count() == 1
    assert len(collection.report[COUNTS_KEY]["near_matches"]) == 1
    assert len(collection.report[COUNTS_KEY]["split_pairs"]) == 1


def test_no_decision_or_a_bad_one_changes_nothing(collection, alice_client) -> None:
    before = collection.report
    url = reverse("datasets:near_matches", args=[collection.pk])
    for post in ({}, {"pair_0": "maybe"}, {"pair_99": "merge"}):
        response = alice_client.post(url, post, follow=True)
        assert response.status_code == 200
    messages = [str(m) for m in response.context["messages"]]
    assert messages == ["Unknown decision 'merge' for pair 100."]
    collection.refresh_from_db()
    assert collection.report == before
    assert Dataset.objects.count() == 1
    assert not ImportJob.objects.exists()


def test_a_viewer_sees_the_pairs_but_may_not_decide(collection, user, other_user,
                                                    client) -> None:
    project_services.member_add(user=user, project=collection.project, identifier="bob",
                                role="viewer")
    client.force_login(other_user)
    url = reverse("datasets:near_matches", args=[collection.pk])
    html = client.get(url).content.decode()
    assert "different first author" in html
    assert 'name="pair_' not in html
    assert client.post(url, {"pair_0": "merge"}).status_code == 403
    assert Dataset.objects.count() == 1


def test_a_merge_queued_before_the_list_changed_fails_and_saves_nothing(
    collection, alice_client
) -> None:
    later, earlier = sorted([pair_index(collection, ATRIAL), pair_index(collection, VITAMIN)],
                            reverse=True)
    url = reverse("datasets:near_matches", args=[collection.pk])
    alice_client.post(url, {f"pair_{later}": "merge"})  # queued, not run yet
    alice_client.post(url, {f"pair_{earlier}": "split"})  # at once: the list loses a pair
    job = import_run_last()  # the merge's index now names no pair
    assert (job.status, job.dataset_id) == ("failed", None)
    assert job.reason == ("The near matches of this collection changed meanwhile (someone "
                          "else decided some); nothing was saved: decide again.")
    assert Dataset.objects.count() == 1
