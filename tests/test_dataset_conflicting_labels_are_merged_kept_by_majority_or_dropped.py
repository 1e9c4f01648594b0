"""Rows with the same text (ignoring case, spacing and punctuation) but different labels are
resolved by the rule the owner picks on the dataset page: merged into one multi-label row, kept
with the majority's labels (a tie drops the group), or dropped. Each makes a new dataset whose
report counts what the rule touched; the original dataset and its rows stay as they were."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from django.urls import reverse

from dataset_management.conflicts import conflicts_resolve_rows, dataset_resolve_conflicts
from dataset_management.models import Dataset
from dataset_management.normalize import text_key
from dataset_management.selectors import dataset_rows_iter
from tests.job_support import dataset_digest

pytestmark = pytest.mark.django_db

LABELS = ["cardio", "neuro", "onco"]


def conflicted_file(path: Path) -> Path:
    rows = [(f"Plain article {i} on {LABELS[i % 3]} number {i}.", LABELS[i % 3])
            for i in range(60)]
    rows += [("Statin therapy lowers LDL.", "cardio"), ("statin therapy lowers ldl", "cardio"),
             ("STATIN THERAPY LOWERS LDL!", "neuro")]            # majority: cardio
    rows += [("Gliomas and seizures.", "neuro"), ("gliomas and seizures", "onco")]  # a tie
    with path.open("w", encoding="utf-8", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["abstract", "label"])
        out.writerows(rows)
    return path


def labels_by_text(dataset: Dataset) -> dict[str, list[list[str]]]:
    found: dict[str, list[list[str]]] = {}
    for row in dataset_rows_iter(dataset=dataset, with_record=False):
        found.setdefault(text_key(row["text"]), []).append(sorted(row["labels"]))
    return found


@pytest.fixture
def conflicted(import_file, tmp_path):
    return import_file(conflicted_file(tmp_path / "conflicts.csv"), name="Conflicts")


@pytest.mark.parametrize(("rule", "statin", "glioma", "removed", "ties"), [
    ("merge", [["cardio", "neuro"]], [["neuro", "onco"]], 3, 0),
    ("majority", [["cardio"], ["cardio"]], None, 3, 2),
    ("drop", None, None, 5, 0),
])
def test_each_rule_makes_a_new_dataset_and_counts_what_it_did(
        conflicted, user, rule, statin, glioma, removed, ties) -> None:
    before = dataset_digest(conflicted)
    resolved = dataset_resolve_conflicts(dataset=conflicted, rule=rule, user=user)
    texts = labels_by_text(resolved)
    assert texts.get(text_key("Statin therapy lowers LDL")) == statin
    assert texts.get(text_key("Gliomas and seizures")) == glioma
    assert resolved.row_count == conflicted.row_count - removed
    done = resolved.report["conflicts_resolved"]
    assert done["rule"] == rule
    assert done["source_dataset_id"] == conflicted.pk
    assert (done["conflicting_groups"], done["conflicting_rows"]) == (2, 5)
    assert (done["rows_removed"], done["ties_dropped"]) == (removed, ties)
    assert resolved.is_multilabel == (rule == "merge")
    assert resolved.report["duplicates"]["conflicting_label_groups"] == 0
    assert dataset_digest(conflicted) == before
    assert conflicted.report["duplicates"]["conflicting_label_groups"] == 2


def test_the_dataset_page_offers_the_choice_and_applies_it(conflicted, alice_client) -> None:
    url = reverse("datasets:detail", args=[conflicted.pk])
    html = alice_client.get(url).content.decode()
    assert 'id="conflicts-form"' in html
    for rule in ("merge", "majority", "drop"):
        assert f'value="{rule}"' in html
    response = alice_client.post(reverse("datasets:resolve_conflicts", args=[conflicted.pk]),
                                 {"rule": "merge"})
    resolved = Dataset.objects.exclude(pk=conflicted.pk).get()
    assert response.status_code == 302
    assert response["Location"] == reverse("datasets:detail", args=[resolved.pk])
    page = alice_client.get(response["Location"]).content.decode()
    assert "merged into one multi-label row" in page
    assert 'id="conflicts-form"' not in page


def test_a_bad_rule_or_nothing_to_resolve_is_refused_and_creates_nothing(
        conflicted, import_file, tmp_path, user, alice_client) -> None:
    response = alice_client.post(reverse("datasets:resolve_conflicts", args=[conflicted.pk]),
                                 {"rule": "shuffle"}, follow=True)
    assert "Unknown rule" in response.content.decode()
    path = tmp_path / "clean.csv"
    path.write_text("abstract,label\n" + "".join(f"text {i},{LABELS[i % 2]}\n"
                                                 for i in range(20)), encoding="utf-8")
    clean = import_file(path, name="Clean")
    with pytest.raises(ValueError, match="No text in this dataset carries conflicting labels"):
        dataset_resolve_conflicts(dataset=clean, rule="drop", user=user)
    assert Dataset.objects.count() == 2


def test_the_rule_itself_keeps_order_and_agreeing_repeats() -> None:
    rows = [{"row_id": i, "text": t, "labels": labels} for i, (t, labels) in enumerate([
        ("A b", ["x"]), ("a  B", ["x"]), ("c", ["y"]), ("C!", ["z"]), ("d", ["x"])])]
    kept, counts = conflicts_resolve_rows(rows, rule="drop")
    assert [row["row_id"] for row in kept] == [0, 1, 4]
    assert counts["conflicting_groups"] == 1
