"""A dataset whose file holds 50 texts each labelled two ways lists all 50 groups on its
conflicts page, 20 to a page, each with the file's row numbers and the stored texts, under
"50 groups with conflicting labels"; the dataset page links there. A dataset imported before
the report kept every group (only the first 5 stored) still renders, and says the full list
needs the file imported again."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest
from django.urls import reverse

from dataset_management.models import Dataset
from dataset_management.validation import MAX_EXAMPLES

pytestmark = pytest.mark.django_db

PAIRS = 50


def conflicts_file(path: Path) -> Path:
    """Plain rows, then 50 texts that each come twice: once cardio, once neuro."""
    labels = ("cardio", "neuro", "onco")
    rows = [(f"Plain article {i} about {labels[i % 3]}.", labels[i % 3]) for i in range(30)]
    for i in range(PAIRS):
        text = f"Conflicted report number {i} on statins and seizures."
        rows += [(text, "cardio"), (text.upper(), "neuro")]
    with path.open("w", encoding="utf-8", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["abstract", "label"])
        out.writerows(rows)
    return path


@pytest.fixture
def conflicted(import_file, tmp_path) -> Dataset:
    return import_file(conflicts_file(tmp_path / "pairs.csv"), name="Pairs")


def conflicts_page(client, dataset: Dataset, page: int) -> str:
    url = reverse("datasets:conflicts", args=[dataset.pk])
    response = client.get(url, {"page": page})
    assert response.status_code == 200
    return response.content.decode()


def test_all_fifty_conflicting_groups_are_listed_across_three_pages(
        conflicted, alice_client) -> None:
    duplicates = conflicted.report["duplicates"]
    assert duplicates["conflicting_label_groups"] == PAIRS
    assert len(duplicates["conflicting_row_ids"]) == PAIRS  # numbers only: no texts stored
    assert len(duplicates["conflicting_examples"]) == MAX_EXAMPLES

    detail = alice_client.get(reverse("datasets:detail", args=[conflicted.pk])).content.decode()
    assert reverse("datasets:conflicts", args=[conflicted.pk]) in detail
    assert f"All {PAIRS} groups with conflicting labels" in detail

    seen: dict[str, str] = {}
    for number, expected in ((1, 20), (2, 20), (3, 10)):
        html = conflicts_page(alice_client, conflicted, number)
        assert f"{PAIRS} groups with conflicting labels" in html
        assert f"Page {number} of 3" in html
        groups = re.findall(r'data-group="([\d, ]+)"', html)
        firsts = dict.fromkeys(groups)  # each group's two rows carry its data-group
        assert len(firsts) == expected
        for group in firsts:
            seen[group] = html
        assert 'id="conflicts-missing"' not in html
    assert len(seen) == PAIRS
    # The texts come from the stored rows: every one of the 50 is shown once on some page.
    every_page = "".join(conflicts_page(alice_client, conflicted, n) for n in (1, 2, 3))
    for i in range(PAIRS):
        assert f"Conflicted report number {i} on statins" in every_page
    assert every_page.count("cardio") >= PAIRS
    assert every_page.count("neuro") >= PAIRS


def test_the_first_and_second_rows_of_a_group_are_its_rows_in_the_file(
        conflicted, alice_client) -> None:
    html = conflicts_page(alice_client, conflicted, 1)
    # Header row 1, 30 plain rows (2-31): the first pair is rows 32 and 33 of the file.
    assert 'data-group="32, 33"' in html
    assert "row 32" in html
    assert "row 33" in html


def test_a_report_made_before_every_group_was_kept_still_renders_and_says_so(
        conflicted, alice_client) -> None:
    report = conflicted.report
    for key in ("conflicting_row_ids", "conflicting_file_rows"):
        del report["duplicates"][key]
    Dataset.objects.filter(pk=conflicted.pk).update(report=report)

    detail = alice_client.get(reverse("datasets:detail", args=[conflicted.pk]))
    html = conflicts_page(alice_client, conflicted, 1)

    assert detail.status_code == 200
    assert "Same text, different labels (file rows)" in detail.content.decode()
    assert f"{PAIRS} groups with conflicting labels" in html
    assert (f"only {MAX_EXAMPLES} of its {PAIRS} groups are listed, by their rows in the file. "
            "Import the file again to list them all") in html
    assert len(set(re.findall(r'data-group="([\d, ]+)"', html))) == MAX_EXAMPLES
    assert 'id="conflicts-form"' in html  # the rules still apply to every group


def test_someone_outside_the_datasets_project_cannot_see_its_conflicts(
        conflicted, bob_client) -> None:
    response = bob_client.get(reverse("datasets:conflicts", args=[conflicted.pk]))

    assert response.status_code == 404
