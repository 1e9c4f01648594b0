"""Saved searches at every door: the API creates one (201), runs it (202 and a Location to the
run, whose digest it then serves) and refuses bad input field by field with nothing saved; the
pages list, create and show a search with its latest digest; a viewer may read but not run; a
second run while one searches is refused; the broker down answers 503 and fails the run."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.files import File
from django.test import Client
from rest_framework.test import APIClient

from api.tokens import token_create
from dataset_management.services import dataset_create_from_upload
from literature import runs
from literature.models import SavedSearch, SearchRun
from projects import services as project_services
from tests.eutils_support import (
    ReplayServer,
    free_port_refused,
    living_review,
    pubmed_settings,
    script_run,
)

pytestmark = pytest.mark.django_db
FORMATS = Path(__file__).resolve().parent / "fixtures" / "formats"


@pytest.fixture
def broker_down() -> Iterator[None]:
    """This process's Celery app publishes to a port nobody listens on, through fresh pools
    (as tests/test_batch_broker_down_at_creation_answers_503_and_leaves_no_orphan.py)."""
    from medlitbot_project.celery import app

    saved = (app.conf.broker_url, app._pool, app.amqp._producer_pool)
    app.conf.broker_url = free_port_refused().replace("http://", "redis://").split("/entrez")[0]
    app._pool = app.amqp._producer_pool = None
    yield
    app.conf.broker_url, app._pool, app.amqp._producer_pool = saved


def api_for(user: Any) -> APIClient:
    client = APIClient()
    _, key = token_create(user=user, name="test")
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def test_the_api_creates_runs_and_serves_the_digest(
        settings: Any, user: Any, media_root: Path, tfidf_artifact: dict[str, Any],
        django_capture_on_commit_callbacks: Any,
) -> None:
    search = living_review(user, tfidf_artifact)
    client = api_for(user)
    created = client.post("/api/searches/", {
        "project": search.project_id, "name": "Second", "query": "telomere*[tiab]",
        "mindate": "2001-01-01", "schedule": "weekly", "ml_model": search.ml_model_id},
        format="json")
    assert created.status_code == 201, created.content
    assert created["Location"].endswith(f"/api/searches/{created.json()['id']}/")
    assert created.json()["next_run_at"] is not None  # weekly: due at beat's next tick

    with ReplayServer() as server:
        pubmed_settings(settings, server)
        server.play(script_run("esearch_run1.xml"))
        with django_capture_on_commit_callbacks(execute=False) as sent:
            started = client.post(f"/api/searches/{search.pk}/runs/", format="json")
        assert started.status_code == 202, started.content
        assert len(sent) == 1  # the run's task, sent once the row commits
        run_url = started["Location"]
        assert client.post(f"/api/searches/{search.pk}/runs/").status_code == 409
        runs.search_run_execute(run_id=started.json()["id"])
    body = client.get(run_url).json()
    assert body["status"] == "classifying"
    assert body["new"] == 3
    assert [item["pmid"] for item in body["items"]] == ["11748933", "11700088", "27797938"]
    listed = client.get("/api/searches/", {"project": search.project_id}).json()["results"]
    assert {s["name"] for s in listed} == {"Telomeres and cancer", "Second"}
    detail = client.get(f"/api/searches/{search.pk}/").json()
    assert detail["latest_run"]["id"] == body["id"]


def _labelled_dataset(owner: Any, project: Any) -> Any:
    with (FORMATS / "comma.csv").open("rb") as handle:
        return dataset_create_from_upload(owner=owner, project=project, name="Training",
                                          uploaded_file=File(handle, name="comma.csv"))


@pytest.mark.parametrize(("change", "field", "words"), [
    ({"query": "  "}, "query", "This field is required."),
    ({"name": ""}, "name", "This field is required."),
    ({"schedule": "hourly"}, "schedule", "Select a valid choice"),
    ({"mindate": "2020-02-30"}, "mindate", "Enter a valid date."),
    ({"mindate": "2021-01-01", "maxdate": "2020-01-01"}, "maxdate",
     "The earliest publication date is after the latest."),
    ({"collection": "LABELLED"}, "collection", "Select a valid choice"),
])
def test_bad_input_is_refused_by_field_and_nothing_is_saved(
        user: Any, media_root: Path, tfidf_artifact: dict[str, Any], change: dict[str, Any],
        field: str, words: str,
) -> None:
    search = living_review(user, tfidf_artifact)
    if change.get("collection") == "LABELLED":
        change = {"collection": _labelled_dataset(user, search.project_id).pk}
    before = SavedSearch.objects.count()
    data = {"project": search.project_id, "name": "X", "query": "cancer", **change}
    answer = api_for(user).post("/api/searches/", data, format="json")
    assert answer.status_code == 400
    assert any(words in message for message in answer.json().get(field, [])), answer.json()
    assert SavedSearch.objects.count() == before


def test_the_service_refuses_a_labelled_collection_with_what_to_do(
        user: Any, media_root: Path, tfidf_artifact: dict[str, Any]) -> None:
    from literature.services import SavedSearchError, saved_search_update

    search = living_review(user, tfidf_artifact)
    labelled = _labelled_dataset(user, search.project_id)
    with pytest.raises(SavedSearchError) as caught:
        saved_search_update(user=user, search=search, collection=labelled)
    assert caught.value.field == "collection"
    assert caught.value.message.startswith("“Training” is labelled (training data)")


def test_a_viewer_reads_but_may_not_run_or_change(
        user: Any, media_root: Path, tfidf_artifact: dict[str, Any]) -> None:
    search = living_review(user, tfidf_artifact)
    viewer = get_user_model().objects.create_user("vera", "v@example.org", "pw-123456")
    project_services.member_set(actor=user, project=search.project, member=viewer,
                                role="viewer")
    client = api_for(viewer)
    assert client.get(f"/api/searches/{search.pk}/").status_code == 200
    refused = client.post(f"/api/searches/{search.pk}/runs/")
    assert refused.status_code == 403
    assert "maintainer role" in refused.json()["detail"]
    assert client.patch(f"/api/searches/{search.pk}/", {"name": "Y"},
                        format="json").status_code == 403
    assert SearchRun.objects.count() == 0


@pytest.mark.django_db(transaction=True)  # the task is sent when a commit happens
def test_the_broker_down_answers_503_and_the_run_is_failed(
        broker_down: None, user: Any, media_root: Path, tfidf_artifact: dict[str, Any],
) -> None:
    search = living_review(user, tfidf_artifact)
    answer = api_for(user).post(f"/api/searches/{search.pk}/runs/")
    assert answer.status_code == 503
    run = SearchRun.objects.get()
    assert run.status == "failed"
    assert "job queue is unreachable" in run.reason


def test_the_pages_list_create_and_show_the_latest_digest(
        settings: Any, user: Any, media_root: Path, tfidf_artifact: dict[str, Any],
) -> None:
    search = living_review(user, tfidf_artifact)
    client = Client()
    client.force_login(user)
    session = client.session
    session["project_id"] = search.project_id
    session.save()
    page = client.get("/literature/")
    assert page.status_code == 200
    assert "Telomeres and cancer" in page.content.decode()
    created = client.post("/literature/", {"name": "Via the page", "query": "telomere*",
                                           "schedule": "off"})
    assert created.status_code == 302, created.content.decode()[:2000]
    with ReplayServer() as server:
        pubmed_settings(settings, server)
        server.play(script_run("esearch_run1.xml"))
        assert client.post(f"/literature/searches/{search.pk}/run/").status_code == 302
        runs.search_run_execute(run_id=SearchRun.objects.get(search=search).pk)
    detail = client.get(f"/literature/searches/{search.pk}/").content.decode()
    assert "3 new articles (classifying)" in detail
    assert "https://pubmed.ncbi.nlm.nih.gov/27797938/" in detail
    collection = SearchRun.objects.get(search=search).dataset
    page = client.get(f"/datasets/{collection.pk}/").content.decode()
    assert "From saved PubMed searches" in page
    assert "3 new articles (classifying)" in page
