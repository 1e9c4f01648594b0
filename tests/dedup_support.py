"""Real records for the collection tests: the demo data's articles (demo_data/medlit_challenge.csv,
the project's own demo file, see demo_data/SOURCE.md), chosen so that no two share a title or an
abstract, which the tests then copy, change and plant as duplicates."""

from __future__ import annotations

import csv

from dataset_management.dedup import title_normalise
from tests.plugins.datasets import DEMO_CSV


def demo_articles(count: int) -> list[dict[str, str]]:
    """The demo's first `count` articles whose title and abstract no other one shares."""
    titles: set[str] = set()
    abstracts: set[str] = set()
    chosen = []
    with DEMO_CSV.open(encoding="utf-8-sig", newline="") as handle:
        for row in csv.DictReader(handle, delimiter=";"):
            title = title_normalise(row["title"]).replace(" ", "")
            abstract = title_normalise(row["abstract"]).replace(" ", "")
            if len(title) < 20 or len(abstract) < 100 or title in titles or abstract in abstracts:
                continue
            titles.add(title)
            abstracts.add(abstract)
            chosen.append(row)
            if len(chosen) == count:
                return chosen
    raise AssertionError("the demo data has too few distinct articles")
