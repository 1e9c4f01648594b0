"""A screening session on a labelled dataset is for that dataset's labels only.

The page's form and POST /api/screening/sessions/ refuse a label the dataset does not have,
naming the labels it has, and make nothing; an unlabelled dataset (prediction-only) is screened
for any label.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from projects.middleware import SESSION_KEY
from screening.models import Record, ScreeningSession
from tests.screening_review_support import cited_dataset_make
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db

SESSIONS = "/api/screening/sessions/"


def _api(person: Any) -> APIClient:
    api = APIClient()
    api.force_authenticate(person)
    return api


def test_the_api_refuses_a_label_the_dataset_lacks_and_names_its_labels(team) -> None:  # noqa: F811
    answer = _api(team.maintainer).post(SESSIONS, {
        "name": "Onc", "dataset": team.dataset.pk, "labels": ["oncological", "oncology"]},
        format="json")
    assert answer.status_code == 400, answer.content
    message = answer.json()["labels"][0]
    assert message.startswith("Dataset “Small” has no label oncology; it is labelled ")
    for label in team.dataset.label_names:
        assert label in message
    assert not ScreeningSession.objects.exists()
    assert not Record.objects.exists()


def test_the_page_refuses_it_with_the_same_message_on_the_labels_field(team) -> None:  # noqa: F811
    boss = Client()
    boss.force_login(team.maintainer)
    store = boss.session
    store[SESSION_KEY] = team.project.pk
    store.save()
    page = boss.post(reverse("screening:list"), data={
        "name": "Renal", "dataset": team.dataset.pk, "labels": "renal, cardiac",
        "order": "most_likely", "reviewers_per_record": 1, "ranker_every": 10,
        "recall_target": 0.95, "confidence": 0.95})
    assert page.status_code == 200
    errors = page.context["form"].errors["labels"]
    assert errors[0].startswith("Dataset “Small” has no label renal, cardiac; it is labelled ")
    assert not ScreeningSession.objects.exists()


def test_the_dataset_s_own_labels_are_accepted(team) -> None:  # noqa: F811
    answer = _api(team.maintainer).post(SESSIONS, {
        "name": "Onc", "dataset": team.dataset.pk, "labels": "oncological, neurological"},
        format="json")
    assert answer.status_code == 201, answer.content
    assert ScreeningSession.objects.get().labels == ["oncological", "neurological"]


def test_an_unlabelled_dataset_is_screened_for_any_label(team) -> None:  # noqa: F811
    cited = cited_dataset_make(team)
    assert not cited.label_names
    answer = _api(team.maintainer).post(SESSIONS, {
        "name": "New question", "dataset": cited.pk, "labels": ["renal"]}, format="json")
    assert answer.status_code == 201, answer.content
    assert ScreeningSession.objects.get().labels == ["renal"]
