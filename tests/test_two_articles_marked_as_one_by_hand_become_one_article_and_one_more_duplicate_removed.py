"""A person marks two articles that the matcher did not pair as one, on the near-matches page:
by row number, PMID or DOI. A worker makes a new version in which they are one article (the
longer abstract kept, both source files kept), the count of duplicates removed rises by one in
the totals, in what PRISMA reads (rows dropped as duplicates) and in the later record's file,
and the project's log says who marked which rows. A bad pick (one article twice, a row past
the end, an identifier no article has, nothing) is said on the page and saves nothing."""

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


@pytest.fixture
def collection(media_root, user) -> Dataset:
    team = project_services.project_create(user=user, name="Living review team")
    call_command("import_dataset", *map(str, FILES), "--name", "Review", "--owner", "alice",
                 "--project", str(team.pk), "--unlabelled", stdout=StringIO())
    return Dataset.objects.get()


def unpaired(dataset: Dataset) -> list[dict]:
    paired = {row for pair in dataset.report[COUNTS_KEY]["near_matches"] for row in pair["rows"]}
    return [row for row in dataset_rows_iter(dataset=dataset) if row["row_id"] not in paired]


def duplicates_in_files(counts: dict) -> int:
    for f in counts["files"]:
        assert f["identified"] == f["added"] + f["duplicates_removed"] + sum(f["dropped"].values())
    return sum(f["duplicates_removed"] for f in counts["files"])


def test_two_articles_marked_by_hand_become_one(collection, user, alice_client) -> None:
    rows = unpaired(collection)
    first = rows[0]
    second = next(r for r in rows[1:] if (r["identifiers"] or {}).get("pmid"))
    url = reverse("datasets:duplicates_mark", args=[collection.pk])
    response = alice_client.post(url, {"first": str(first["row_id"] + 1),
                                       "second": f"pmid:{second['identifiers']['pmid']}"})
    job = import_run_last()
    assert response["Location"] == reverse("datasets:import_detail", args=[job.pk])
    assert job.status == "completed", job.reason
    version = Dataset.objects.get(pk=job.dataset_id)
    assert version.pk != collection.pk
    assert version.name == "Review (duplicates marked)"
    assert version.row_count == collection.row_count - 1 == 14
    counts = version.report[COUNTS_KEY]
    assert (counts["records_identified"], counts["duplicates_removed"]) == (21, 7)
    assert (version.report["rows_read"], version.report["rows_dropped"]) == (21, 7)
    assert counts["merged_by"]["by hand"] == 1
    assert duplicates_in_files(collection.report[COUNTS_KEY]) == 6
    assert duplicates_in_files(counts) == 7
    assert prisma_duplicates(version, user) == 7
    titles = [r["title"] for r in dataset_rows_iter(dataset=version)]
    assert titles.count(first["title"]) + titles.count(second["title"]) == 1
    assert len(counts["near_matches"]) == 2  # the matcher's pairs still to decide

    line = Activity.objects.get(verb="duplicates_marked")
    assert line.actor_id == user.pk
    assert line.detail["rows"] == sorted([first["row_id"], second["row_id"]])
    assert line.detail["version"] == version.pk
    assert "marked by hand as one article" in line.summary

    page = alice_client.get(reverse("datasets:near_matches", args=[version.pk])).content.decode()
    assert 'id="merges-made"' in page
    assert "by hand" in page


@pytest.mark.parametrize(("first", "second", "said"), [
    ("3", "3", "Both picks name the same article (row 3): choose two different articles."),
    ("3", "99", "There is no row 99: this dataset has 15 rows, numbered from 1."),
    ("3", "pmid:123", "No article of this dataset has pmid 123."),
    ("0", "3", "There is no row 0: this dataset has 15 rows, numbered from 1."),
    ("3", "", "Name two articles: a row number, a PMID (pmid:123) or a DOI."),
    ("3", "abc", "“abc” is not a row number, a PMID (pmid:123) or a DOI."),
])
def test_a_bad_pick_is_said_and_saves_nothing(collection, alice_client, first, second,
                                              said) -> None:
    before = collection.report
    response = alice_client.post(reverse("datasets:duplicates_mark", args=[collection.pk]),
                                 {"first": first, "second": second}, follow=True)
    assert response.status_code == 200
    assert [str(m) for m in response.context["messages"]] == [f"Nothing marked: {said}"]
    collection.refresh_from_db()
    assert collection.report == before
    assert Dataset.objects.count() == 1
    assert not ImportJob.objects.exists()
    assert not Activity.objects.filter(verb="duplicates_marked").exists()


def test_a_viewer_may_not_mark(collection, user, other_user, client) -> None:
    project_services.member_add(user=user, project=collection.project, identifier="bob",
                                role="viewer")
    client.force_login(other_user)
    page = client.get(reverse("datasets:near_matches", args=[collection.pk])).content.decode()
    assert 'id="duplicates-mark"' not in page
    response = client.post(reverse("datasets:duplicates_mark", args=[collection.pk]),
                           {"first": "1", "second": "2"})
    assert response.status_code == 403
    assert not ImportJob.objects.exists()
