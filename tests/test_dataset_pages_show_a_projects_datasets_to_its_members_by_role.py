"""The dataset pages and the dashboard show the current project's datasets to all its members.
A viewer sees a colleague's dataset (list, detail, download) but no Upload, Train, Move or
Delete button, and the server refuses those requests anyway (403). Someone outside the project
gets 404 for every one of its dataset addresses."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.files import File
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from dataset_management.models import Dataset
from dataset_management.services import dataset_create_from_upload
from projects.middleware import SESSION_KEY
from projects.models import Role
from projects.services import member_set, project_create
from tests.import_support import import_run_last
from tests.plugins.datasets import FORMATS

pytestmark = pytest.mark.django_db


def working_in(client: Client, project) -> Client:
    session = client.session
    session[SESSION_KEY] = project.pk
    session.save()
    return client


@pytest.fixture
def team_dataset(user, media_root):
    """Alice's dataset in her project "Team", with its rows on disk so it can be exported."""
    team = project_create(user=user, name="Team")
    with (FORMATS / "comma.csv").open("rb") as handle:
        return dataset_create_from_upload(owner=user, project=team, name="Team trials",
                                          uploaded_file=File(handle, name="comma.csv"))


def test_a_viewer_sees_a_colleagues_dataset_without_the_buttons_of_higher_roles(
        user, other_user, bob_client, team_dataset):
    member_set(actor=user, project=team_dataset.project, member=other_user, role=Role.VIEWER)
    working_in(bob_client, team_dataset.project)

    listing = bob_client.get(reverse("datasets:list")).content.decode()
    assert "Team trials" in listing
    assert 'id="dataset-upload"' not in listing
    assert f"?dataset={team_dataset.pk}" not in listing  # no Train button
    detail = bob_client.get(reverse("datasets:detail", args=[team_dataset.pk]))
    page = detail.content.decode()
    assert detail.status_code == 200
    assert "Team trials" in page
    assert 'id="dataset-export-csv"' in page  # viewers download
    for button in ('id="delete-card"', 'id="move-card"', "Train a model on it",
                   'id="conflicts-form"'):
        assert button not in page
    dashboard = bob_client.get(reverse("dashboard")).content.decode()
    assert "Team trials" in dashboard
    assert "Upload dataset" not in dashboard
    export = bob_client.get(reverse("datasets:export", args=[team_dataset.pk]) + "?format=csv")
    assert export.status_code == 200


def test_a_viewers_forged_requests_are_refused(user, other_user, bob_client, team_dataset):
    member_set(actor=user, project=team_dataset.project, member=other_user, role=Role.VIEWER)
    working_in(bob_client, team_dataset.project)
    refused = bob_client.post(reverse("datasets:delete", args=[team_dataset.pk]))
    assert refused.status_code == 403
    assert "Deleting needs the maintainer role in this project; you are a viewer." in (
        refused.content.decode())
    assert bob_client.get(reverse("datasets:upload")).status_code == 403
    upload = bob_client.post(reverse("datasets:upload"), {
        "file": SimpleUploadedFile("a.csv", b"abstract,label\nx,a\ny,b\n"), "name": "Forged",
        "split_ratios": "0.8,0.1,0.1", "seed": 42})
    assert upload.status_code == 403
    resolve = bob_client.post(reverse("datasets:resolve_conflicts", args=[team_dataset.pk]),
                              {"rule": "drop"})
    assert resolve.status_code == 403
    assert list(Dataset.objects.values_list("name", flat=True)) == ["Team trials"]


def test_a_maintainer_gets_the_buttons_and_uploads_into_the_current_project(
        user, other_user, bob_client, team_dataset):
    member_set(actor=user, project=team_dataset.project, member=other_user,
               role=Role.MAINTAINER)
    working_in(bob_client, team_dataset.project)
    assert 'id="dataset-upload"' in bob_client.get(reverse("datasets:list")).content.decode()
    page = bob_client.get(reverse("datasets:detail", args=[team_dataset.pk])).content.decode()
    assert 'id="delete-card"' in page
    staging = bob_client.post(reverse("datasets:upload"), {
        "file": SimpleUploadedFile("b.csv", b"abstract,label\nx one,a\ny two,b\nz,a\nw,b\n"),
        "name": "Bob's", "split_ratios": "0.5,0.25,0.25", "seed": 42}).context["staging"]
    bob_client.post(reverse("datasets:upload_confirm"), {
        "token": staging.token, "name": "Bob's", "split_ratios": "0.5,0.25,0.25", "seed": "42",
        "action": "create"})
    assert import_run_last().status == "completed"  # what the worker's task runs
    assert Dataset.objects.get(name="Bob's").project == team_dataset.project


def test_someone_outside_the_project_gets_404_everywhere(other_user, bob_client, team_dataset):
    for url in (reverse("datasets:detail", args=[team_dataset.pk]),
                reverse("datasets:export", args=[team_dataset.pk]) + "?format=csv"):
        response = bob_client.get(url)
        assert response.status_code == 404
        assert b"Team trials" not in response.content
    for name in ("delete", "move", "resolve_conflicts"):
        url = reverse(f"datasets:{name}", args=[team_dataset.pk])
        assert bob_client.post(url, {"project": 1, "rule": "drop"}).status_code == 404
    assert "Team trials" not in bob_client.get(reverse("datasets:list")).content.decode()
    assert "Team trials" not in bob_client.get(reverse("dashboard")).content.decode()
    assert Dataset.objects.filter(pk=team_dataset.pk).exists()


def test_the_list_shows_only_the_current_project(user, alice_client, rows, team_dataset):
    rows.dataset(user, name="Personal notes")
    personal = alice_client.get(reverse("datasets:list")).content.decode()
    assert "Personal notes" in personal
    assert "Team trials" not in personal
    working_in(alice_client, team_dataset.project)
    team = alice_client.get(reverse("datasets:list")).content.decode()
    assert "Team trials" in team
    assert "Personal notes" not in team
    # A detail page works from any of the person's projects.
    assert alice_client.get(reverse("datasets:detail", args=[
        Dataset.objects.get(name="Personal notes").pk])).status_code == 200
    assert get_user_model().objects.count() == 1
