"""The review of a finished batch lists its articles least certain first (margin for one label,
closeness to each label's own threshold for several), counts how often the reviewers kept the
model's labels, overall and per label, and shows nothing of a batch outside its project."""

from __future__ import annotations

import pytest
from django.urls import reverse

from classification.models import BatchJob
from classification.review import selectors, services
from classification.review.models import ReviewItem
from classification.review.uncertainty import label_certainty, uncertainty_score
from tests.batch_support import completed_batch

LABELS = ["cardiovascular", "neurological"]  # thresholds 0.4 and 0.55 (MULTI_METRICS)
# row, title, predicted labels, p(cardiovascular), p(neurological); row 4 had no text.
MULTI_ROWS = [
    (1, "Statins after infarction", ["cardiovascular"], 0.95, 0.02),
    (2, "Palpitations in athletes", ["cardiovascular"], 0.42, 0.10),
    (3, "Migraine and stroke", ["neurological"], 0.10, 0.60),
    (5, "Syncope workup", ["cardiovascular"], 0.70, 0.50),
    (6, "=HYPERLINK(\"http://x\")", ["cardiovascular", "neurological"], 0.99, 0.99),
]


@pytest.fixture
def multi_batch(media_root, user, rows) -> BatchJob:
    return completed_batch(user, rows.model(user), MULTI_ROWS, LABELS)


def page_url(batch: BatchJob, **query: str) -> str:
    url = reverse("classification:review:page", args=[batch.pk.hex])
    return url + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else "")


def item_url(batch: BatchJob, row: int) -> str:
    return reverse("classification:review:item", args=[batch.pk.hex, row])


def test_scores_are_margins_for_one_label_and_threshold_distances_for_several() -> None:
    coin = uncertainty_score(probabilities={"a": 0.5, "b": 0.5}, labels=["a", "b"],
                             multi_label=False)
    sure = uncertainty_score(probabilities={"a": 0.98, "b": 0.02}, labels=["a", "b"],
                             multi_label=False)
    assert coin == 1.0
    assert sure == pytest.approx(0.04)
    # Several labels: a probability at its threshold is a coin toss, wherever the threshold is.
    assert label_certainty(0.55, 0.55) == 0.0
    assert label_certainty(0.9, 0.8) == pytest.approx(0.5)
    assert label_certainty(0.25, 0.5) == pytest.approx(0.5)
    wavering = uncertainty_score(probabilities={"a": 0.99, "b": 0.56}, labels=["a", "b"],
                                 multi_label=True, thresholds={"a": 0.5, "b": 0.55})
    assert wavering > 0.95, "one wavering label makes the article uncertain"


def test_opening_the_review_copies_the_classified_rows_once_least_certain_first(
    multi_batch, alice_client
) -> None:
    response = alice_client.get(page_url(multi_batch))
    assert response.status_code == 200
    page = response.content.decode()
    queue = list(selectors.review_queue(batch=multi_batch))
    # Against the model's thresholds (0.4, 0.55), row 5's neurological 0.50 is close to its
    # threshold, but row 2's cardiovascular 0.42 is closer still; at a flat 0.5 row 5 would lead.
    assert [i.row for i in queue] == [2, 5, 3, 1, 6]
    assert "Palpitations in athletes" in page
    assert "Article 1 of 5" in page
    assert 'id="label-1" data-key="1" checked' in page  # pre-set to the model's answer
    item = queue[-1]
    assert item.title == '=HYPERLINK("http://x")', "the CSV's apostrophe is not the title's"
    assert item.probabilities == {"cardiovascular": 0.99, "neurological": 0.99}
    assert item.predicted_labels == LABELS
    ids = sorted(ReviewItem.objects.values_list("pk", flat=True))
    assert services.review_items_ensure(batch=multi_batch) == 5
    alice_client.get(page_url(multi_batch))
    assert sorted(ReviewItem.objects.values_list("pk", flat=True)) == ids, "created once"
    assert [s.row for s in selectors.review_suggestions(batch=multi_batch, limit=2)] == [2, 5]


def test_a_single_label_review_orders_by_the_margin_between_the_two_likeliest(
    media_root, user, rows, alice_client
) -> None:
    labels = ["a", "b", "c"]
    model = rows.model(user, label_names=labels, is_multilabel=False, metrics={})
    batch = completed_batch(user, model, [
        (1, "Close call", ["a"], 0.50, 0.45, 0.05),
        (2, "Clear", ["a"], 0.90, 0.05, 0.05),
        (3, "Three-way tie", ["a"], 0.34, 0.33, 0.33),
    ], labels)
    assert alice_client.get(page_url(batch)).status_code == 200
    assert [i.row for i in selectors.review_queue(batch=batch)] == [3, 1, 2]
    refused = alice_client.post(item_url(batch, 3), {"labels": ["a", "b"]},
                                HTTP_ACCEPT="application/json")
    assert refused.status_code == 400
    assert "exactly one label" in refused.json()["detail"]
    assert not ReviewItem.objects.get(batch=batch, row=3).is_reviewed


def test_corrections_are_stored_with_who_and_when_and_agreement_is_counted(
    multi_batch, alice_client, user
) -> None:
    alice_client.get(page_url(multi_batch))
    # Row 2: confirmed. Row 5: the model missed neurological. Row 3: the label was wrong.
    confirm = alice_client.post(item_url(multi_batch, 2), {"labels": ["cardiovascular"]},
                                HTTP_ACCEPT="application/json")
    assert confirm.status_code == 200
    assert confirm.json()["confirmed"] is True
    assert confirm.json()["next_url"] == page_url(multi_batch, row="5")
    form = alice_client.post(item_url(multi_batch, 5),
                             {"labels": LABELS, "mode": "one"})
    assert form.status_code == 302
    assert form["Location"] == page_url(multi_batch, row="3")
    last = alice_client.post(item_url(multi_batch, 3), {"labels": ["cardiovascular"]},
                             HTTP_ACCEPT="application/json").json()

    item = ReviewItem.objects.get(batch=multi_batch, row=5)
    assert item.reviewed_labels == LABELS
    assert item.reviewer == user
    assert item.reviewed_at is not None
    assert not item.is_confirmed
    agreement = last["agreement"]
    assert agreement == selectors.review_agreement(batch=multi_batch)
    assert (agreement["total"], agreement["reviewed"], agreement["todo"]) == (5, 3, 2)
    assert (agreement["exact"], agreement["corrected"]) == (1, 2)
    assert agreement["exact_share"] == pytest.approx(1 / 3)
    per_label = {row["label"]: row for row in agreement["per_label"]}
    assert per_label["cardiovascular"] | {"share": None} == {
        "label": "cardiovascular", "agree": 2, "added": 0, "missed": 1, "share": None}
    assert per_label["cardiovascular"]["share"] == pytest.approx(2 / 3)
    assert (per_label["neurological"]["agree"], per_label["neurological"]["added"],
            per_label["neurological"]["missed"]) == (1, 1, 1)
    # The next suggestion skips what is reviewed; the page shows the figures.
    assert [s.row for s in selectors.review_suggestions(batch=multi_batch)] == [1, 6]
    page = alice_client.get(page_url(multi_batch)).content.decode()
    assert "Statins after infarction" in page  # row 1: the least certain one left
    assert 'data-agreement="exact_share">33%' in page
    listing = alice_client.get(page_url(multi_batch, mode="list", show="reviewed")).content
    assert listing.decode().count('class="review-row reviewed"') == 3


def test_bad_labels_are_refused_and_leave_the_article_unreviewed(
    multi_batch, alice_client
) -> None:
    alice_client.get(page_url(multi_batch))
    for labels in ([], ["oncology"]):
        response = alice_client.post(item_url(multi_batch, 2), {"labels": labels},
                                     HTTP_ACCEPT="application/json")
        assert response.status_code == 400, labels
    assert not ReviewItem.objects.filter(reviewed_labels__isnull=False).exists()
    assert alice_client.post(item_url(multi_batch, 99), {"labels": LABELS}).status_code == 404


def test_only_the_batch_owner_can_open_or_change_its_review(
    multi_batch, alice_client, bob_client, client
) -> None:
    hex_id = multi_batch.pk.hex
    urls = {
        "page": ("get", page_url(multi_batch)),
        "list": ("get", page_url(multi_batch, mode="list")),
        "item": ("post", item_url(multi_batch, 2)),
        "dataset": ("post", reverse("classification:review:dataset", args=[hex_id])),
        "retrain": ("post", reverse("classification:review:retrain", args=[hex_id])),
    }
    for name, (method, url) in urls.items():
        response = getattr(bob_client, method)(url, {"labels": LABELS})
        assert response.status_code == 404, name
        anonymous = getattr(client, method)(url, {"labels": LABELS})
        assert anonymous.status_code == 302, name
        assert "/accounts/login/" in anonymous["Location"], name
    assert not ReviewItem.objects.exists(), "nobody else's visit copies the rows"
    assert alice_client.get(page_url(multi_batch)).status_code == 200


def test_a_batch_still_running_has_no_review_yet(media_root, user, rows, alice_client) -> None:
    batch = BatchJob.objects.create(owner=user, ml_model=rows.model(user), filename="a.csv",
                                    status=BatchJob.Status.RUNNING)
    response = alice_client.get(page_url(batch))
    assert response.status_code == 302
    assert response["Location"] == reverse("classification:batch_detail", args=[batch.pk.hex])
    assert not ReviewItem.objects.exists()


def test_the_api_lists_the_review_least_certain_first_and_takes_labels(
    multi_batch, rows, user, api_token, other_api_token
) -> None:
    from rest_framework.test import APIClient

    api, bob = APIClient(), APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {api_token}")
    bob.credentials(HTTP_AUTHORIZATION=f"Token {other_api_token}")
    url = f"/api/batches/{multi_batch.pk.hex}/review/"
    listing = api.get(url, {"show": "all"}).json()
    assert listing["count"] == 5
    assert [i["row"] for i in listing["items"]] == [2, 5, 3, 1, 6]
    assert listing["items"][0]["reviewed_labels"] is None
    saved = api.post(f"{url}2/", {"labels": ["neurological"]})  # form fields, as curl -d sends
    assert saved.status_code == 200
    assert saved.json()["confirmed"] is False
    assert saved.json()["next_row"] == 5
    assert saved.json()["item"]["reviewer"] == "alice"
    assert saved.json()["agreement"]["corrected"] == 1
    todo = api.get(url).json()
    assert [i["row"] for i in todo["items"]] == [5, 3, 1, 6]
    assert api.post(f"{url}2/", {"labels": ["oncology"]}).status_code == 400
    assert api.post(f"{url}2/", {}).status_code == 400
    assert bob.get(url).status_code == 404
    assert bob.post(f"{url}2/", {"labels": LABELS}).status_code == 404
    running = BatchJob.objects.create(owner=user, ml_model=multi_batch.ml_model,
                                      filename="b.csv", status=BatchJob.Status.RUNNING)
    assert api.get(f"/api/batches/{running.pk.hex}/review/").status_code == 409
