"""A row with no title is shown by its text's first twelve words and an ellipsis, on the upload
preview, the dataset's sample rows and the review (the article, the list, the suggestions),
never blank or "(no title)"; a row with a title still shows its title."""

from __future__ import annotations

import csv

from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from classification.batches import storage
from dataset_management.articles import title_or_first_words
from tests.batch_support import completed_batch

ABSTRACT = ("Chronic kidney disease progressed faster in adults with poorly controlled "
            "hypertension than in those whose pressure was treated to target.")
FIRST_WORDS = ("Chronic kidney disease progressed faster in adults with poorly controlled "
               "hypertension than…")
LABELS = ["cardiovascular", "neurological"]


def test_the_helper_gives_the_title_else_the_first_twelve_words():
    assert title_or_first_words(title="Statins", text=ABSTRACT) == "Statins"
    assert title_or_first_words(title="  ", text=ABSTRACT) == FIRST_WORDS
    assert title_or_first_words(title=None, text="Short  text\nonly") == "Short text only"
    assert title_or_first_words(title="", text="") == ""


def test_the_upload_preview_names_title_less_rows_by_their_first_words(alice_client,
                                                                       media_root):
    body = "abstract,label\n" + "".join(
        f'"{ABSTRACT}",{label}\n' for label in ("cardio", "neuro", "cardio", "neuro"))
    upload = SimpleUploadedFile("no_titles.csv", body.encode())
    response = alice_client.post(reverse("datasets:upload"), {
        "name": "No titles", "split_ratios": "0.5,0.25,0.25", "seed": 1, "file": upload,
    })
    assert response.status_code == 200
    assert f"<tr><td>{FIRST_WORDS}</td>" in response.content.decode()


def test_the_dataset_page_names_title_less_rows_by_their_first_words(alice_client,
                                                                     import_file, tmp_path):
    path = tmp_path / "no_titles.csv"
    path.write_text("abstract,label\n" + "".join(
        f'"{ABSTRACT} {i}",{label}\n' for i, label in enumerate(["cardio", "neuro"] * 4)))
    dataset = import_file(path)
    page = alice_client.get(reverse("datasets:detail", args=[dataset.pk])).content.decode()
    assert f"<tr><td>{FIRST_WORDS}" in page  # the cell may list the source fields after it


def test_the_review_names_a_title_less_article_by_its_first_words(alice_client, media_root,
                                                                  user, rows):
    # The title-less row sits on both thresholds (0.4, 0.55): the least certain, shown first.
    batch = completed_batch(user, rows.model(user), [
        (1, "Statins after infarction", ["cardiovascular"], 0.95, 0.02),
        (2, "", ["neurological"], 0.40, 0.55),
    ], LABELS)
    _rewrite_abstract(batch, row="2", abstract=ABSTRACT)
    url = reverse("classification:review:page", args=[batch.pk.hex])
    one = alice_client.get(url).content.decode()
    listed = alice_client.get(url + "?mode=list").content.decode()
    assert f'<h2 class="review-title" id="review-title">{FIRST_WORDS}</h2>' in one
    assert f"?row=2\">{FIRST_WORDS[:69]}…</a>" in one  # the suggestions cut at 70
    assert f"<strong>{FIRST_WORDS}</strong>" in listed
    assert "Statins after infarction" in listed
    assert "(no title)" not in one + listed


def _rewrite_abstract(batch, *, row: str, abstract: str) -> None:
    path = storage.absolute(batch.result_path)
    with path.open(encoding="utf-8-sig", newline="") as f:
        table = list(csv.reader(f))
    for line in table[1:]:
        if line[0] == row:
            line[2] = abstract
    with path.open("w", encoding="utf-8-sig", newline="") as f:
        csv.writer(f).writerows(table)
