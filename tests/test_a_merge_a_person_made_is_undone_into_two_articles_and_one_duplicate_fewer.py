"""A near-match pair a person confirmed (merged in a new version) can be un-merged from the
near-matches page: a worker makes a newer version in which its two records are two articles
again, written back as they were before the merge; the count of duplicates removed falls by
one in the totals, in what PRISMA reads and in the file the later record came from, and the
pair is not listed to confirm again. Confirming, rejecting and un-merging are each in the
project's log with who did it. Naming no merge saves nothing."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from dataset_management.collection import COUNTS_KEY
from dataset_management.models import Dataset, ImportJob
from dataset_management.selectors import dataset_rows_iter
from projects import services as project_services
from projects.models import Activity
from tests.import_support import import_run_last
from tests.plugins.datasets import ROOT

pytestmark = pytest.mark.django_db

DEDUP = ROOT / "tests" / "fixtures" / "dedup"
FILES = [DEDUP / "pubmed_search.nbib", DEDUP / "embase_search.ris", DEDUP / "scopus_search.csv"]
ATRIAL = "atrial fibrillation screening with wearable devices"


@pytest.fixture
def collection(media_root, user) -> Dataset:
    team = project_services.project_create(user=user, name="Living review team")
    call_command("import_dataset", *map(str, FILES), "--name", "Review", "--owner", "alice",
                 "--project", str(team.pk), "--unlabelled", stdout=StringIO())
    return Dataset.objects.get()


def atrial_rows(dataset: Dataset) -> list[dict]:
    return [r for r in dataset_rows_iter(dataset=dataset)
            if r["title"].casefold().rstrip(".") == ATRIAL]


def file_duplicates(counts: dict) -> list[int]:
    for f in counts["files"]:
        assert f["identified"] == f["added"] + f["duplicates_removed"] + sum(f["dropped"].values())
    return [f["duplicates_removed"] for f in counts["files"]]


def confirmed(collection: Dataset, client) -> Dataset:
    rows = {r["row_id"] for r in atrial_rows(collection)}
    pairs = collection.report[COUNTS_KEY]["near_matches"]
    atrial = next(i for i, pair in enumerate(pairs) if set(pair["rows"]) == rows)
    other = 1 - atrial
    client.post(reverse("datasets:near_matches", args=[collection.pk]),
                {f"pair_{atrial}": "merge", f"pair_{other}": "split"})
    job = import_run_last()
    assert job.status == "completed", job.reason
    return Dataset.objects.get(pk=job.dataset_id)


def test_a_confirmed_pair_is_unmerged_into_its_two_records(collection, user,
                                                           alice_client) -> None:
    before = sorted((r["title"], r["abstract"], r["citation"].get("year"))
                    for r in atrial_rows(collection))
    merged = confirmed(collection, alice_client)
    assert merged.row_count == 14
    decided = Activity.objects.get(verb="near_matches_decided")
    assert decided.actor_id == user.pk
    assert (len(decided.detail["merged"]), len(decided.detail["kept_apart"])) == (1, 1)
    page = alice_client.get(reverse("datasets:near_matches", args=[merged.pk])).content.decode()
    assert 'id="merges-made"' in page
    assert "Un-merge" in page

    response = alice_client.post(reverse("datasets:merge_undo", args=[merged.pk]),
                                 {"group": "0"})
    job = import_run_last()
    assert response["Location"] == reverse("datasets:import_detail", args=[job.pk])
    assert job.status == "completed", job.reason
    undone = Dataset.objects.get(pk=job.dataset_id)
    assert undone.pk not in (collection.pk, merged.pk)
    assert undone.row_count == 15
    assert sorted((r["title"], r["abstract"], r["citation"].get("year"))
                  for r in atrial_rows(undone)) == before
    counts, was = undone.report[COUNTS_KEY], merged.report[COUNTS_KEY]
    assert (was["duplicates_removed"], counts["duplicates_removed"]) == (7, 6)
    assert (undone.report["rows_read"], undone.report["rows_dropped"]) == (21, 6)
    assert file_duplicates(counts) == file_duplicates(collection.report[COUNTS_KEY])
    assert sum(file_duplicates(was)) == 7
    assert "confirmed" not in counts["merged_by"]
    assert counts["merged_groups"] == []
    assert counts["near_matches"] == []  # neither pair is listed again
    assert len(counts["split_pairs"]) == 2

    line = Activity.objects.get(verb="duplicates_unmerged")
    assert line.actor_id == user.pk
    assert (line.detail["dataset"], line.detail["version"]) == (merged.pk, undone.pk)
    assert "2 articles again" in line.summary


def test_a_rejected_pair_alone_is_in_the_log(collection, user, alice_client) -> None:
    alice_client.post(reverse("datasets:near_matches", args=[collection.pk]), {"pair_0": "split"})
    line = Activity.objects.get(verb="near_matches_decided")
    assert line.actor_id == user.pk
    assert line.detail["version"] == collection.pk
    assert "0 near-match pair(s) confirmed as one article, 1 kept apart" in line.summary


def test_undoing_no_merge_saves_nothing(collection, alice_client) -> None:
    merged = confirmed(collection, alice_client)
    url = reverse("datasets:merge_undo", args=[merged.pk])
    for post, said in (({"group": "5"}, "There is no merge 6 to undo in this dataset."),
                       ({}, "Choose a merge to undo.")):
        response = alice_client.post(url, post, follow=True)
        assert [str(m) for m in response.context["messages"]][-1] == f"Nothing undone: {said}"
    assert ImportJob.objects.count() == 1  # the merge's own
    assert Dataset.objects.count() == 2
    original = alice_client.post(reverse("datasets:merge_undo", args=[collection.pk]),
                                 {"group": "0"}, follow=True)
    assert [str(m) for m in original.context["messages"]] == [
        "Nothing undone: There is no merge 1 to undo in this dataset."]
