"""A collection with 40 near-match pairs (the same title, years four apart): 20 whose texts
are almost the same (one word of the abstract differs) and 20 whose abstracts are different.
Their page sorts them into two similarity bands, with the articles left if a band were merged;
two decisions, "merge all in this band" for the first and "keep all apart" for the second,
clear all 40, across pages, as ONE import job that makes ONE new version. The counts before and
after are kept and shown; the pairs kept apart are not listed again."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from dataset_management.collection import COUNTS_KEY, collection_create
from dataset_management.collection_merge import Source
from dataset_management.models import Dataset, ImportJob
from projects.services import project_create
from tests.dedup_support import demo_articles
from tests.import_support import import_run_last

pytestmark = pytest.mark.django_db

PAIRS = 20  # per band


def ris_record(title: str, abstract: str, year: int) -> str:
    return (f"TY  - JOUR\nTI  - {' '.join(title.split())}\nAB  - {' '.join(abstract.split())}\n"
            f"PY  - {year}\nER  - \n\n")


def write_search(path: Path) -> None:
    """40 articles from 2010, each with a copy from 2014: the first 20 copies change one word
    of the abstract, the next 20 carry another article's abstract; 10 more articles alone."""
    articles = demo_articles(3 * PAIRS + 10)
    with path.open("w", encoding="utf-8") as out:
        for article in articles[:2 * PAIRS + 10]:
            out.write(ris_record(article["title"], article["abstract"], 2010))
        for article in articles[:PAIRS]:
            out.write(ris_record(article["title"], "Revised " + article["abstract"], 2014))
        for article, other in zip(articles[PAIRS:2 * PAIRS], articles[2 * PAIRS + 10:],
                                  strict=True):
            out.write(ris_record(article["title"], other["abstract"], 2014))


def test_two_band_decisions_clear_40_pairs_as_one_version(media_root, user, alice_client,
                                                          tmp_path) -> None:
    search = tmp_path / "search.ris"
    write_search(search)
    project = project_create(user=user, name="Review team")
    collection, _ = collection_create(owner=user, project=project, name="Search",
                                      sources=[Source(path=search, name=search.name)])
    pairs = collection.report[COUNTS_KEY]["near_matches"]
    assert collection.row_count == 90
    assert len(pairs) == 2 * PAIRS
    assert {p["reason"] for p in pairs} == {"different year (2010 / 2014)"}
    assert sorted(p["band"] for p in pairs) == ["high"] * PAIRS + ["low"] * PAIRS

    url = reverse("datasets:near_matches", args=[collection.pk])
    html = alice_client.get(url).content.decode()
    assert 'data-band="high"' in html
    assert 'data-band="low"' in html
    assert '<td>20</td><td>70</td>' in html  # each band: 20 pairs, 70 articles if merged
    assert html.count('name="pair_') == 3 * 20  # one page of 20 pairs, three choices each

    response = alice_client.post(url, {"band_high": "merge", "band_low": "split"})
    job = import_run_last()
    assert response["Location"] == reverse("datasets:import_detail", args=[job.pk])
    assert job.status == "completed", job.reason
    assert ImportJob.objects.count() == 1
    assert Dataset.objects.count() == 2  # the collection and one new version
    version = Dataset.objects.latest("pk")
    assert version.row_count == 70
    counts = version.report[COUNTS_KEY]
    assert counts["near_matches"] == []
    assert len(counts["split_pairs"]) == PAIRS
    assert counts["merged_by"]["confirmed"] == PAIRS
    assert counts["last_review"] == {"articles_before": 90, "articles_after": 70,
                                     "merged": PAIRS, "kept_apart": PAIRS,
                                     "pairs_before": 2 * PAIRS, "pairs_after": 0}
    detail = alice_client.get(reverse("datasets:detail", args=[version.pk])).content.decode()
    assert "20 pairs merged, 20 kept apart · 90 articles before, 70 after" in detail
    assert "How duplicates are found" in detail
    assert "title_abstract" in detail


def test_a_pair_choice_wins_over_its_band(media_root, user, alice_client, tmp_path) -> None:
    search = tmp_path / "search.ris"
    write_search(search)
    project = project_create(user=user, name="Review team")
    collection, _ = collection_create(owner=user, project=project, name="Search",
                                      sources=[Source(path=search, name=search.name)])
    pairs = collection.report[COUNTS_KEY]["near_matches"]
    first_high = next(i for i, p in enumerate(pairs) if p["band"] == "high")
    alice_client.post(reverse("datasets:near_matches", args=[collection.pk]),
                      {"band_high": "split", f"pair_{first_high}": "merge"})
    assert import_run_last().status == "completed"
    version = Dataset.objects.latest("pk")
    assert version.row_count == 89
    assert len(version.report[COUNTS_KEY]["near_matches"]) == PAIRS  # the low band is left
