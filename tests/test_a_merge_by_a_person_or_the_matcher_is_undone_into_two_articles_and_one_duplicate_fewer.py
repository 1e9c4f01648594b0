"""A near-match pair a person confirmed (merged in a new version), or two records the
matcher's own rules merged (the same PMID, DOI or text), can be un-merged from the
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
from screening import services as screening_services
from screening.prisma import prisma_counts
from tests.import_support import import_run_last
from tests.plugins.datasets import ROOT

pytestmark = pytest.mark.django_db


def prisma_duplicates(dataset: Dataset, user) -> int:
    """PRISMA's duplicates removed for a screening of `dataset`, its per-source lines the
    collection's files and its articles what is left."""
    session = screening_services.session_create(user=user, name=f"Flow {dataset.pk}",
                                                labels=["relevant"], dataset=dataset)
    counts = prisma_counts(session)
    assert [s["identified"] for s in counts["sources"]] == [
        f["identified"] for f in dataset.report["collection"]["files"]]
    assert sum(f["added"] for f in dataset.report["collection"]["files"]) == dataset.row_count
    assert counts["identified"] - counts["duplicates_removed"] == dataset.row_count
    return counts["duplicates_removed"]

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


def made_by(dataset: Dataset, by: str) -> int:
    """The index of the one merge of `dataset` made `by` ("confirmed", "by hand")."""
    [index] = [i for i, g in enumerate(dataset.report[COUNTS_KEY]["merged_groups"])
               if g["by"] == by]
    return index


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
                                 {"group": str(made_by(merged, "confirmed"))})
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
    assert (prisma_duplicates(merged, user), prisma_duplicates(undone, user)) == (7, 6)
    assert "confirmed" not in counts["merged_by"]
    assert {g["by"] for g in counts["merged_groups"]} == {"doi", "pmid", "title"}
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
    for post, said in (({"group": "50"}, "There is no merge 51 to undo in this dataset."),
                       ({}, "Choose a merge to undo.")):
        response = alice_client.post(url, post, follow=True)
        assert [str(m) for m in response.context["messages"]][-1] == f"Nothing undone: {said}"
    assert ImportJob.objects.count() == 1  # the merge's own
    assert Dataset.objects.count() == 2
    assert Activity.objects.filter(verb="duplicates_unmerged").count() == 0


def test_undoing_a_later_merge_brings_back_the_earlier_one_it_took_in(collection,
                                                                      alice_client) -> None:
    merged = confirmed(collection, alice_client)
    atrial = atrial_rows(merged)[0]["row_id"]
    other = next(r for r in dataset_rows_iter(dataset=merged) if r["row_id"] != atrial)
    alice_client.post(reverse("datasets:duplicates_mark", args=[merged.pk]),
                      {"first": str(atrial + 1), "second": str(other["row_id"] + 1)})
    job = import_run_last()
    assert job.status == "completed", job.reason
    both = Dataset.objects.get(pk=job.dataset_id)
    assert (both.row_count, both.report[COUNTS_KEY]["duplicates_removed"]) == (13, 8)
    alice_client.post(reverse("datasets:merge_undo", args=[both.pk]),
                      {"group": str(made_by(both, "by hand"))})
    job = import_run_last()
    assert job.status == "completed", job.reason
    back = Dataset.objects.get(pk=job.dataset_id)
    counts = back.report[COUNTS_KEY]
    assert (back.row_count, counts["duplicates_removed"]) == (14, 7)
    earlier = counts["merged_groups"][made_by(back, "confirmed")]
    restored = next(r for r in dataset_rows_iter(dataset=back) if r["row_id"] == earlier["row"])
    assert restored["title"].casefold().rstrip(".") == ATRIAL
    assert len(atrial_rows(back)) == 1
    assert file_duplicates(counts) == file_duplicates(merged.report[COUNTS_KEY])


def test_a_merge_by_the_matchers_own_rules_is_undone_too(collection, user, alice_client) -> None:
    groups = collection.report[COUNTS_KEY]["merged_groups"]
    index = next(i for i, g in enumerate(groups) if g["by"] == "pmid")
    pmid = groups[index]["records"][0]["pmid"]
    page = alice_client.get(reverse("datasets:near_matches", args=[collection.pk]))
    assert "automatic: same pmid" in page.content.decode()
    alice_client.post(reverse("datasets:merge_undo", args=[collection.pk]),
                      {"group": str(index)})
    job = import_run_last()
    assert job.status == "completed", job.reason
    undone = Dataset.objects.get(pk=job.dataset_id)
    counts = undone.report[COUNTS_KEY]
    assert (undone.row_count, counts["duplicates_removed"]) == (16, 5)
    assert [r["identifiers"].get("pmid") for r in dataset_rows_iter(dataset=undone)].count(
        pmid) == 2
    assert "pmid" not in counts["merged_by"]
    assert prisma_duplicates(undone, user) == 5
    assert sum(file_duplicates(counts)) == 5
    assert Activity.objects.get(verb="duplicates_unmerged").detail["by"] == "pmid"


def test_undoing_a_merge_that_gives_back_the_version_before_it_says_so(collection,
                                                                       alice_client) -> None:
    alice_client.post(reverse("datasets:duplicates_mark", args=[collection.pk]),
                      {"first": "1", "second": "2"})
    marked = Dataset.objects.get(pk=import_run_last().dataset_id)
    alice_client.post(reverse("datasets:merge_undo", args=[marked.pk]),
                      {"group": str(made_by(marked, "by hand"))})
    job = import_run_last()
    assert (job.status, job.dataset_id) == ("failed", None)
    assert job.reason == (f"Undoing this merge gives back dataset 'Review' (id {collection.pk}) "
                          "exactly: work on that one. Nothing was saved.")
    assert Dataset.objects.count() == 2
    assert not Activity.objects.filter(verb="duplicates_unmerged").exists()
