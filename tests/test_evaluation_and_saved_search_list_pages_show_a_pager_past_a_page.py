"""The pages behind the paged API lists page too (core.paging.page_of): a model's evaluations
and the saved searches show PER_PAGE rows and the pager past that, and page 2 holds the rest."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from classification.models import EvaluationJob, MLModel
from core.paging import PER_PAGE
from dataset_management.models import Dataset
from literature.models import SavedSearch
from projects import services as project_services

pytestmark = pytest.mark.django_db

ROWS = PER_PAGE + 2


@pytest.fixture
def project(user: Any) -> Any:
    return project_services.project_create(user=user, name="Living reviews")


@pytest.fixture
def browser(user: Any, project: Any) -> Client:
    client = Client()
    client.force_login(user)
    session = client.session
    session["project_id"] = project.pk  # the saved-search list shows the current project's
    session.save()
    return client


def rows_and_pager(client: Client, url: str, row: str) -> tuple[int, str]:
    page = client.get(url)
    assert page.status_code == 200
    html = page.content.decode()
    return len(re.findall(row, html)), html


def test_a_models_evaluations_page_shows_a_pager_past_a_page(
        browser: Client, project: Any, user: Any) -> None:
    dataset = Dataset.objects.create(project=project, owner=user, name="Collection",
                                     label_names=["oncological"])
    model = MLModel.objects.create(project=project, dataset=dataset, owner=user, name="Model",
                                   model_type="tfidf_logreg")
    EvaluationJob.objects.bulk_create(
        EvaluationJob(project=project, ml_model=model, owner=user, filename=f"file {i}.csv")
        for i in range(ROWS))
    url = reverse("classification:model_evaluate", args=[model.pk])

    shown, html = rows_and_pager(browser, url, r"data-evaluation=")
    rest, second = rows_and_pager(browser, f"{url}?page=2", r"data-evaluation=")

    assert (shown, rest) == (PER_PAGE, 2)
    assert 'aria-label="Pages"' in html
    assert f"{ROWS} in all" in html
    assert "?page=2" in html
    assert "Page 2 of 2" in second


def test_the_saved_search_list_shows_a_pager_past_a_page(
        browser: Client, project: Any, user: Any) -> None:
    SavedSearch.objects.bulk_create(
        SavedSearch(project=project, owner=user, name=f"Search {i:03}", query=f"topic {i}")
        for i in range(ROWS))

    shown, html = rows_and_pager(browser, "/literature/", r"/literature/searches/\d+/")
    rest, second = rows_and_pager(browser, "/literature/?page=2", r"/literature/searches/\d+/")

    assert (shown, rest) == (PER_PAGE, 2)
    assert f"{ROWS} in all" in html
    assert "Search 000" in html  # by name: the last one is on page 2
    assert f"Search {ROWS - 1:03}" not in html
    assert f"Search {ROWS - 1:03}" in second
