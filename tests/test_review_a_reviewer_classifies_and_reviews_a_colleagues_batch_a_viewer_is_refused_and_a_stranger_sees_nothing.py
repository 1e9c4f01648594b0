"""Alice's project has a reviewer (Carol) and a viewer (Victor); Bob is not in it.

Carol classifies with Alice's model (one text and a file) and reviews Alice's batch. Victor sees
the batch and downloads its results, but the Classify and Review buttons are not drawn for him,
and every forged request is refused 403 with a sentence naming the reviewer role. Bob gets 404
everywhere, with none of the data.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from classification.models import BatchJob
from classification.review.models import ReviewItem
from projects.models import Activity, Role
from projects.services import member_set, project_personal
from tests.batch_support import completed_batch

pytestmark = pytest.mark.django_db

ROWS = [
    (1, "Statins after infarction", ["cardiovascular"], 0.95, 0.02),
    (2, "Migraine and stroke", ["neurological"], 0.10, 0.60),
]
REVIEWER_SENTENCE = "needs the reviewer role in this project; you are a viewer"


def client_for(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def team(media_root, user, other_user, trained_model) -> dict[str, Any]:
    users = get_user_model().objects
    carol = users.create_user("carol", "carol@example.org", "carol-pass-123")
    victor = users.create_user("victor", "victor@example.org", "victor-pass-123")
    project = project_personal(user=user)
    member_set(actor=user, project=project, member=carol, role=Role.REVIEWER)
    member_set(actor=user, project=project, member=victor, role=Role.VIEWER)
    labels = trained_model.label_names
    rows = [(row, title, [labels[0]], 0.9, *[0.1] * (len(labels) - 1))
            for row, title, _, _, _ in ROWS]
    batch = completed_batch(user, trained_model, rows, labels)
    return {"project": project, "model": trained_model, "batch": batch, "labels": labels,
            "carol": client_for(carol), "victor": client_for(victor),
            "bob": client_for(other_user)}


def review_url(batch: BatchJob, row: int | None = None) -> str:
    if row is None:
        return reverse("classification:review:page", args=[batch.pk.hex])
    return reverse("classification:review:item", args=[batch.pk.hex, row])


def test_a_reviewer_classifies_with_the_colleagues_model_and_reviews_the_colleagues_batch(
        team) -> None:
    carol, model, batch, labels = team["carol"], team["model"], team["batch"], team["labels"]
    page = carol.get(reverse("classification:batch_detail", args=[batch.pk.hex])).content
    assert b'id="batch-review"' in page

    classified = carol.post(reverse("classification:classify"),
                            {"model": model.pk, "title": "Heart failure", "abstract": "Statins"})
    assert classified.status_code == 200
    assert b"Predicted:" in classified.content

    created = carol.post(reverse("classification:batch_create"), {
        "model": model.pk, "file": SimpleUploadedFile("mine.csv", b"title;abstract\nA;Heart\n")})
    assert created.status_code == 302
    mine = BatchJob.objects.get(filename="mine.csv")
    assert mine.project_id == team["project"].pk
    assert mine.owner.username == "carol"

    assert carol.get(review_url(batch)).status_code == 200
    saved = carol.post(review_url(batch, 2), {"labels": [labels[-1]]},
                       HTTP_ACCEPT="application/json")
    assert saved.status_code == 200, saved.content
    item = ReviewItem.objects.get(batch=batch, row=2)
    assert item.reviewed_labels == [labels[-1]]
    assert item.reviewer.username == "carol"
    decision = Activity.objects.get(verb="review_decision")
    assert decision.actor.username == "carol"
    assert "row 2" in decision.summary
    assert "Migraine and stroke" in decision.summary
    assert Activity.objects.filter(verb="batch_created", actor__username="carol").exists()


def test_a_viewer_sees_the_batch_without_the_buttons_and_is_refused_naming_the_reviewer_role(
        team) -> None:
    victor, model, batch, labels = team["victor"], team["model"], team["batch"], team["labels"]
    detail = victor.get(reverse("classification:batch_detail", args=[batch.pk.hex]))
    assert detail.status_code == 200
    assert b'id="batch-download"' in detail.content
    assert b'id="batch-review"' not in detail.content
    download = victor.get(reverse("classification:batch_download", args=[batch.pk.hex]))
    assert download.status_code == 200
    classify_page = victor.get(reverse("classification:classify"), {"model": model.pk})
    assert b'id="classify-button"' not in classify_page.content
    assert b'id="batch-form"' not in classify_page.content

    forged = {
        "classify": victor.post(reverse("classification:classify"),
                                {"model": model.pk, "title": "Heart", "abstract": "x"}),
        "batch": victor.post(reverse("classification:batch_create"), {
            "model": model.pk, "file": SimpleUploadedFile("v.csv", b"title\nHeart\n")}),
        "review page": victor.get(review_url(batch)),
        "decision": victor.post(review_url(batch, 1), {"labels": labels[:1]}),
        "review dataset": victor.post(
            reverse("classification:review:dataset", args=[batch.pk.hex])),
    }
    for name, response in forged.items():
        assert response.status_code == 403, name
        assert REVIEWER_SENTENCE in response.content.decode(), name
    assert not BatchJob.objects.filter(filename="v.csv").exists()
    assert not ReviewItem.objects.filter(reviewed_labels__isnull=False).exists()


def test_someone_outside_the_project_gets_404_and_none_of_the_data(team) -> None:
    bob, model, batch = team["bob"], team["model"], team["batch"]
    hex_id = batch.pk.hex
    answers = [
        bob.get(reverse("classification:batch_detail", args=[hex_id])),
        bob.get(reverse("classification:batch_download", args=[hex_id])),
        bob.get(reverse("classification:batch_progress", args=[hex_id])),
        bob.get(review_url(batch)),
        bob.post(review_url(batch, 1), {"labels": team["labels"][:1]}),
        bob.post(reverse("classification:classify"),
                 {"model": model.pk, "title": "Heart", "abstract": "x"}),
        bob.post(reverse("classification:batch_create"), {
            "model": model.pk, "file": SimpleUploadedFile("b.csv", b"title\nHeart\n")}),
    ]
    for response in answers:
        assert response.status_code == 404
        assert b"articles.csv" not in response.content
        assert b"Statins" not in response.content
    assert b"articles.csv" not in bob.get(reverse("classification:classify")).content
    assert not ReviewItem.objects.exists()
