"""A collection counts each duplicate in the file it came from: the files are taken in the order
uploaded, each file's records in order, and a record that repeats an article of an earlier
file, or of an earlier row of its own file, is a duplicate removed in its own file, whichever
record is kept (the longest abstract). So a CSV that is a copy of an RIS file (its abstracts
keeping line breaks and double spaces the RIS collapsed, so longer) has every record removed,
and the RIS only its own repeats; per file, identified = articles added + duplicates removed,
the files sum to the totals, and PRISMA's per-source lines and totals say the same, also for a
version made by adding a file."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from dataset_management.collection import COUNTS_KEY, collection_add_files, collection_create
from dataset_management.collection_merge import Source
from projects.services import project_create
from screening import services as screening_services
from screening.prisma import prisma_counts
from tests.dedup_support import demo_articles

pytestmark = pytest.mark.django_db

# Rows 3 and 7 of the RIS appear twice in it.
REPEATED = (3, 7)


def one_line(text: str) -> str:
    return " ".join(text.split())


def write_ris(path: Path, articles: list[dict[str, str]]) -> Path:
    with path.open("w", encoding="utf-8") as out:
        for article in articles:
            out.write(f"TY  - JOUR\nTI  - {one_line(article['title'])}\n"
                      f"AB  - {one_line(article['abstract'])}\nER  - \n\n")
    return path


def write_csv(path: Path, articles: list[dict[str, str]]) -> Path:
    """The same records as a spreadsheet export: the abstracts' own spacing kept, and a line
    break planted in every other one, so most of the CSV's copies are the longer record."""
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["title", "abstract"])
        for i, article in enumerate(articles):
            abstract = article["abstract"]
            writer.writerow([article["title"],
                             abstract.replace(" ", " \n ", 1) if i % 2 else abstract + "  "])
    return path


def files_of(dataset) -> dict[str, tuple[int, int, int]]:
    return {f["name"]: (f["identified"], f["duplicates_removed"], f["added"])
            for f in dataset.report[COUNTS_KEY]["files"]}


def check_sums(dataset) -> None:
    counts = dataset.report[COUNTS_KEY]
    files = counts["files"]
    assert sum(f["identified"] for f in files) == counts["records_identified"]
    assert sum(f["duplicates_removed"] for f in files) == counts["duplicates_removed"]
    assert sum(f["added"] for f in files) == dataset.row_count
    for f in files:
        assert f["identified"] == f["added"] + f["duplicates_removed"] + sum(
            f["dropped"].values()), f


def check_prisma(dataset, user) -> None:
    session = screening_services.session_create(user=user, name="Flow", labels=["relevant"],
                                                dataset=dataset)
    counts = prisma_counts(session)
    collection = dataset.report[COUNTS_KEY]
    assert [(s["name"], s["identified"]) for s in counts["sources"]] == [
        (f["name"], f["identified"]) for f in collection["files"]]
    assert counts["identified"] == collection["records_identified"] == sum(
        s["identified"] for s in counts["sources"])
    assert counts["duplicates_removed"] == collection["duplicates_removed"]
    assert counts["identified"] - counts["duplicates_removed"] == dataset.row_count


@pytest.fixture
def records() -> list[dict[str, str]]:
    articles = demo_articles(22)[:18]
    return [*articles, articles[REPEATED[0]], articles[REPEATED[1]]]  # 20 records, 18 articles


def test_a_csv_copy_of_an_ris_file_has_every_record_removed_and_the_ris_its_own_repeats(
        media_root, user, tmp_path, records) -> None:
    ris = write_ris(tmp_path / "search.ris", records)
    table = write_csv(tmp_path / "copy.csv", records)
    project = project_create(user=user, name="Review team")
    dataset, result = collection_create(
        owner=user, project=project, name="Copied", unlabelled=True,
        sources=[Source(path=ris, name=ris.name), Source(path=table, name=table.name)])
    assert dataset.row_count == 18
    assert files_of(dataset) == {"search.ris": (20, 2, 18), "copy.csv": (20, 20, 0)}
    counts = dataset.report[COUNTS_KEY]
    assert (counts["records_identified"], counts["duplicates_removed"]) == (40, 22)
    assert [f.line() for f in result.files] == [
        "search.ris (ris): 20 identified, 2 duplicates removed, 18 articles added, "
        "0 near matches to confirm",
        "copy.csv (csv): 20 identified, 20 duplicates removed, 0 articles added, "
        "0 near matches to confirm"]
    check_sums(dataset)
    check_prisma(dataset, user)

    # In the other order the CSV is first: the same rule, the other way round.
    swapped, _ = collection_create(
        owner=user, project=project, name="Swapped", unlabelled=True,
        sources=[Source(path=table, name=table.name), Source(path=ris, name=ris.name)])
    assert files_of(swapped) == {"copy.csv": (20, 2, 18), "search.ris": (20, 20, 0)}
    check_sums(swapped)


def test_files_that_overlap_partly_count_only_their_own_new_and_repeated_records(
        media_root, user, tmp_path, records) -> None:
    others = demo_articles(30)[22:27]  # five articles the RIS does not hold
    ris = write_ris(tmp_path / "search.ris", records)
    # Ten of the RIS's articles, the five new ones, and the second new one again.
    table = write_csv(tmp_path / "update.csv", [*records[:10], *others, others[1]])
    project = project_create(user=user, name="Review team")
    dataset, _ = collection_create(
        owner=user, project=project, name="Overlap", unlabelled=True,
        sources=[Source(path=ris, name=ris.name), Source(path=table, name=table.name)])
    assert dataset.row_count == 23
    assert files_of(dataset) == {"search.ris": (20, 2, 18), "update.csv": (16, 11, 5)}
    check_sums(dataset)
    check_prisma(dataset, user)

    # A version made by adding a file keeps the files before it, with their figures, and
    # counts the new file's records the same way: PRISMA reads the same on the new version.
    more = write_ris(tmp_path / "more.ris", [others[0], *demo_articles(32)[30:32]])
    grown = collection_add_files(dataset=dataset, user=user,
                                 sources=[Source(path=more, name=more.name)])
    assert grown.row_count == 25
    assert files_of(grown) == {"search.ris": (20, 2, 18), "update.csv": (16, 11, 5),
                               "more.ris": (3, 1, 2)}
    counts = grown.report[COUNTS_KEY]
    assert (counts["records_identified"], counts["duplicates_removed"]) == (39, 14)
    assert counts["articles_added"] == 2
    check_sums(grown)
    check_prisma(grown, user)
