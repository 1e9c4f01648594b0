"""The near-matches page shows each pair's two records side by side, field by field (title,
authors, year, journal, DOI, PMID, abstract), and marks the words that differ: struck through
on the first record, underlined on the second, rendered on the server as <del>/<ins> with
classes (no inline style or script), the text escaped. Each record names its row, which the
hand-marking form takes. A pair's confirm/reject choices are its own radios."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from dataset_management.models import Dataset
from dataset_management.near_diff import words_diff
from projects import services as project_services
from tests.plugins.datasets import ROOT

pytestmark = pytest.mark.django_db

DEDUP = ROOT / "tests" / "fixtures" / "dedup"
FILES = [DEDUP / "pubmed_search.nbib", DEDUP / "embase_search.ris", DEDUP / "scopus_search.csv"]


@pytest.fixture
def collection(media_root, user) -> Dataset:
    team = project_services.project_create(user=user, name="Living review team")
    call_command("import_dataset", *map(str, FILES), "--name", "Review", "--owner", "alice",
                 "--project", str(team.pk), "--unlabelled", stdout=StringIO())
    return Dataset.objects.get()


def test_each_pair_shows_both_records_field_by_field_with_the_differences_marked(
    collection, alice_client
) -> None:
    page = alice_client.get(reverse("datasets:near_matches", args=[collection.pk]))
    html = page.content.decode()
    pairs = re.findall(r'<section class="card near-pair" data-pair="(\d+)">(.*?)</section>',
                       html, flags=re.S)
    assert len(pairs) == 2
    by_year = next(body for _, body in pairs if "different year (2019 / 2021)" in body)
    year = re.search(r'<tr class="differs" data-field="year">(.*?)</tr>', by_year, re.S)
    assert year is not None
    assert '<del class="diff">2019</del>' in year.group(1)
    assert '<ins class="diff">2021</ins>' in year.group(1)
    # The other pair's titles are the same: shown, nothing marked in them.
    by_author = next(body for _, body in pairs if "different first author" in body)
    title = re.search(r'<tr class="same" data-field="title">(.*?)</tr>', by_author, re.S)
    assert title is not None
    assert "<del" not in title.group(1)
    assert "<ins" not in title.group(1)
    assert re.search(r"Record 1 · row \d+", by_year)
    assert re.search(r"Record 2 · row \d+", by_year)
    assert 'style="' not in html
    assert "<script>" not in html
    for index, _ in pairs:
        assert html.count(f'name="pair_{index}"') == 3
    assert 'value="merge"> Same article: confirm' in html
    assert 'value="split"> Different articles: reject' in html
    assert 'id="duplicates-mark"' in html


def test_words_are_compared_without_case_or_punctuation_and_marked_where_they_differ() -> None:
    first, second = words_diff(first="Statins in Older adults <b>",
                               second="statins, in older people")
    assert first == [{"text": "Statins in Older", "changed": False},
                     {"text": "adults <b>", "changed": True}]
    assert second == [{"text": "statins, in older", "changed": False},
                      {"text": "people", "changed": True}]
