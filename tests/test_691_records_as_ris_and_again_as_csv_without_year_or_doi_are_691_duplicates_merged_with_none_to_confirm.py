"""The same 691 articles imported twice, once as RIS (with a DOI and a year each, no labels)
and once as the CSV a colleague exported (title, abstract and labels; no year, no DOI), are
691 duplicates removed automatically by "same title and abstract", with none left to confirm:
a missing year or DOI never blocks a match. Each merged article keeps the RIS's DOI and year
and the CSV's labels, and records the rule that matched it. The records are real: the demo
data's first 691 articles with distinct titles and abstracts."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from dataset_management.collection import COUNTS_KEY, collection_create
from dataset_management.collection_merge import Source
from dataset_management.selectors import dataset_rows_iter
from projects.services import project_create
from tests.dedup_support import demo_articles

pytestmark = pytest.mark.django_db

RECORDS = 691


def write_ris(path: Path, articles: list[dict[str, str]]) -> None:
    with path.open("w", encoding="utf-8") as out:
        for i, article in enumerate(articles):
            abstract = " ".join(article["abstract"].split())
            out.write(f"TY  - JOUR\nTI  - {' '.join(article['title'].split())}\n"
                      f"AB  - {abstract}\nPY  - {2000 + i % 20}\n"
                      f"DO  - 10.5555/medlitbot.{i}\nER  - \n\n")


def write_csv(path: Path, articles: list[dict[str, str]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["title", "abstract", "labels"])
        for article in articles:
            writer.writerow([article["title"], article["abstract"], article["group"]])


def test_691_records_twice_are_691_duplicates_removed_and_none_to_confirm(
        media_root, user, tmp_path) -> None:
    articles = demo_articles(RECORDS)
    ris, table = tmp_path / "search.ris", tmp_path / "colleague.csv"
    write_ris(ris, articles)
    write_csv(table, articles)
    project = project_create(user=user, name="Review team")
    dataset, _ = collection_create(
        owner=user, project=project, name="Twice imported",
        sources=[Source(path=ris, name=ris.name), Source(path=table, name=table.name)])

    counts = dataset.report[COUNTS_KEY]
    assert counts["records_identified"] == 2 * RECORDS
    assert counts["duplicates_removed"] == RECORDS
    assert counts["near_matches"] == []
    assert counts["merged_by"] == {"title_abstract": RECORDS}
    assert dataset.row_count == RECORDS
    rows = list(dataset_rows_iter(dataset=dataset))
    assert {tuple(row["record"]["matched_by"]) for row in rows} == {("title_abstract",)}
    assert all(row["identifiers"]["doi"].startswith("10.5555/medlitbot.") for row in rows)
    assert all(row["citation"]["year"] for row in rows)
    assert all(row["labels"] for row in rows)  # the CSV's labels, on the RIS's records too
    assert {tuple(row["record"]["source_files"]) for row in rows} == {
        ("search.ris", "colleague.csv")}
