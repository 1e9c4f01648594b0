"""The API's projects, as issue 26 section 7 names them: /api/projects/ and a project's members
and activity; the lists of datasets, models, jobs and batches take ?project=, and every row says
its project.

A project you are not in is a 404 that says nothing about it; a role too low is a 403 whose
sentence names the role; a refusal in plain words (the last owner, an unknown user, a project
still holding rows) comes back with that sentence.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from classification.models import BatchJob
from dataset_management.models import Dataset
from projects import policy, services
from projects.models import Activity, Membership, Project
from tests.batch_support import DEMO_SLICE
from tests.import_support import import_run_last
from tests.test_review_orders_articles_least_certain_first import (
    LABELS,
    MULTI_ROWS,
    completed_batch,
)

pytestmark = pytest.mark.django_db
ACTIVITY_KEYS = {"id", "at", "actor", "verb", "summary", "subject_type", "subject_id"}


def client_for(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def alice(user: Any) -> APIClient:
    return client_for(user)


@pytest.fixture
def bob(other_user: Any) -> APIClient:
    return client_for(other_user)


@pytest.fixture
def team(user: Any) -> Project:
    return services.project_create(user=user, name="Cardiology team")


def join(project: Project, member: Any, role: str) -> None:
    services.member_set(actor=None, project=project, member=member, role=role)


def ok(response: Any, code: int = 200) -> Any:
    assert response.status_code == code, (response.status_code, response.content[:400])
    return response.json() if response.content else None


# --- Projects ---------------------------------------------------------------------------------


def test_the_list_holds_your_personal_project_and_a_created_one_with_you_as_owner(
    alice: APIClient, user: Any,
) -> None:
    listed = ok(alice.get("/api/projects/"))
    assert [(p["is_personal"], p["role"]) for p in listed["results"]] == [(True, "owner")]

    response = alice.post("/api/projects/", {"name": "  Oncology review "}, format="json")
    created = ok(response, 201)
    assert response["Location"] == f"http://testserver/api/projects/{created['id']}/"
    assert created["name"] == "Oncology review"
    assert created["role"] == "owner"
    assert created["is_personal"] is False
    assert created["member_count"] == 1
    assert created["created_by"] == "alice"
    assert ok(alice.get(f"/api/projects/{created['id']}/")) == created
    assert created in ok(alice.get("/api/projects/"))["results"]
    assert Membership.objects.get(project_id=created["id"], user=user).role == "owner"


def test_a_project_needs_a_name(alice: APIClient) -> None:
    response = alice.post("/api/projects/", {"name": "   "}, format="json")
    assert response.status_code == 400
    assert "name" in response.json()


def test_a_project_you_are_not_in_is_a_404_that_names_nothing(
    bob: APIClient, team: Project, user: Any,
) -> None:
    base = f"/api/projects/{team.pk}/"
    answers = [
        bob.get(base), bob.patch(base, {"name": "Mine"}, format="json"), bob.delete(base),
        bob.get(f"{base}members/"),
        bob.post(f"{base}members/", {"username": "bob", "role": "owner"}, format="json"),
        bob.patch(f"{base}members/{user.pk}/", {"role": "viewer"}, format="json"),
        bob.delete(f"{base}members/{user.pk}/"), bob.get(f"{base}activity/"),
    ]
    for response in answers:
        assert response.status_code == 404, response.request["REQUEST_METHOD"]
        assert b"Cardiology" not in response.content
        assert b"alice" not in response.content
    assert team not in Project.objects.filter(memberships__user__username="bob")
    assert ok(bob.get("/api/projects/"))["count"] == 1  # only bob's personal project


def test_the_owner_renames_it_and_a_maintainer_is_told_the_owner_role_is_needed(
    alice: APIClient, bob: APIClient, team: Project, other_user: Any,
) -> None:
    join(team, other_user, "maintainer")
    refused = bob.patch(f"/api/projects/{team.pk}/", {"name": "Bob's"}, format="json")
    assert refused.status_code == 403
    assert refused.json()["detail"] == ("Renaming the project needs the owner role in this "
                                        "project; you are a maintainer.")

    renamed = ok(alice.patch(f"/api/projects/{team.pk}/", {"name": "Heart team"}, format="json"))
    assert renamed["name"] == "Heart team"
    assert renamed["member_count"] == 2
    assert ok(bob.get(f"/api/projects/{team.pk}/"))["role"] == "maintainer"


def test_delete_refuses_a_personal_project_and_one_holding_rows_then_deletes_an_empty_one(
    alice: APIClient, team: Project, user: Any, rows: Any,
) -> None:
    personal = services.project_personal(user=user)
    refused = alice.delete(f"/api/projects/{personal.pk}/")
    assert refused.status_code == 409
    assert refused.json()["detail"].startswith("A personal project cannot be deleted")

    dataset = rows.dataset(user, project=team)
    refused = alice.delete(f"/api/projects/{team.pk}/")
    assert refused.status_code == 409
    assert refused.json()["detail"] == ("The project still holds 1 datasets; move or delete "
                                        "them first.")

    dataset.delete()
    assert alice.delete(f"/api/projects/{team.pk}/").status_code == 204
    assert alice.get(f"/api/projects/{team.pk}/").status_code == 404


def test_only_an_owner_deletes_a_project(bob: APIClient, team: Project, other_user: Any) -> None:
    join(team, other_user, "maintainer")
    refused = bob.delete(f"/api/projects/{team.pk}/")
    assert refused.status_code == 403
    assert "needs the owner role" in refused.json()["detail"]
    assert Project.objects.filter(pk=team.pk).exists()


# --- Members ----------------------------------------------------------------------------------


def test_an_owner_adds_a_member_by_username_or_email_and_changes_their_role(
    alice: APIClient, team: Project, other_user: Any,
) -> None:
    url = f"/api/projects/{team.pk}/members/"
    added = ok(alice.post(url, {"username": "bob", "role": "reviewer"}, format="json"), 201)
    assert added == {"user_id": other_user.pk, "username": "bob", "role": "reviewer",
                     "joined_at": added["joined_at"]}
    changed = ok(alice.post(url, {"username": "BOB@example.org", "role": "maintainer"},
                            format="json"), 200)
    assert changed["role"] == "maintainer"

    members = ok(alice.get(url))
    assert members["count"] == 2
    assert [(m["username"], m["role"]) for m in members["results"]] == [
        ("alice", "owner"), ("bob", "maintainer")]


def test_adding_an_unknown_user_or_role_is_refused_with_a_sentence(
    alice: APIClient, team: Project,
) -> None:
    url = f"/api/projects/{team.pk}/members/"
    unknown = alice.post(url, {"username": "nobody", "role": "viewer"}, format="json")
    assert unknown.status_code == 400
    assert unknown.json()["detail"].startswith("No user is called “nobody”.")
    bad_role = alice.post(url, {"username": "alice", "role": "admin"}, format="json")
    assert bad_role.status_code == 400
    assert "role" in bad_role.json()


def test_a_member_below_owner_may_read_members_but_not_manage_them(
    bob: APIClient, team: Project, user: Any, other_user: Any,
) -> None:
    join(team, other_user, "reviewer")
    base = f"/api/projects/{team.pk}/members/"
    assert ok(bob.get(base))["count"] == 2
    for response in (
        bob.post(base, {"username": "bob", "role": "owner"}, format="json"),
        bob.patch(f"{base}{other_user.pk}/", {"role": "owner"}, format="json"),
        bob.delete(f"{base}{user.pk}/"),
    ):
        assert response.status_code == 403
        assert response.json()["detail"] == ("Managing members and invitations needs the owner "
                                             "role in this project; you are a reviewer.")
    assert Membership.objects.get(project=team, user=other_user).role == "reviewer"


def test_an_owner_changes_a_role_and_removes_a_member_and_a_member_may_leave(
    alice: APIClient, bob: APIClient, team: Project, other_user: Any,
) -> None:
    carol = get_user_model().objects.create_user("carol", "carol@example.org", "carol-pass-1")
    join(team, other_user, "reviewer")
    join(team, carol, "viewer")
    base = f"/api/projects/{team.pk}/members/"

    assert ok(alice.patch(f"{base}{other_user.pk}/", {"role": "viewer"},
                          format="json"))["role"] == "viewer"
    assert ok(alice.delete(f"{base}{carol.pk}/"), 204) is None
    assert ok(bob.delete(f"{base}{other_user.pk}/"), 204) is None  # bob leaves
    assert bob.get(f"/api/projects/{team.pk}/").status_code == 404
    assert list(team.memberships.values_list("user__username", flat=True)) == ["alice"]
    assert alice.delete(f"{base}{carol.pk}/").status_code == 404  # no longer a member


def test_a_project_never_has_zero_owners(
    alice: APIClient, team: Project, user: Any, other_user: Any,
) -> None:
    base = f"/api/projects/{team.pk}/members/"
    demoted = alice.patch(f"{base}{user.pk}/", {"role": "maintainer"}, format="json")
    assert demoted.status_code == 400
    assert demoted.json()["detail"] == ("A project needs at least one owner: make someone else "
                                        "owner first.")
    left = alice.delete(f"{base}{user.pk}/")
    assert left.status_code == 400
    assert left.json()["detail"] == ("The last owner cannot leave or be removed: make someone "
                                     "else owner first.")

    join(team, other_user, "owner")
    assert alice.delete(f"{base}{user.pk}/").status_code == 204
    assert list(team.memberships.values_list("role", flat=True)) == ["owner"]


# --- Activity ---------------------------------------------------------------------------------


def test_the_activity_log_is_newest_first_with_who_did_what(
    alice: APIClient, bob: APIClient, team: Project, other_user: Any,
) -> None:
    alice.post(f"/api/projects/{team.pk}/members/", {"username": "bob", "role": "reviewer"},
               format="json")
    alice.patch(f"/api/projects/{team.pk}/", {"name": "Heart team"}, format="json")
    services.activity_record(project=team, actor=None, verb="job_cancelled",
                             summary="The system cancelled a stalled job")

    log = ok(bob.get(f"/api/projects/{team.pk}/activity/"))
    assert log["count"] == 4
    entries = log["results"]
    assert all(set(entry) == ACTIVITY_KEYS for entry in entries)
    assert [(e["verb"], e["actor"]) for e in entries] == [
        ("job_cancelled", None), ("project_renamed", "alice"), ("member_added", "alice"),
        ("project_created", "alice")]
    added = entries[2]
    membership = Membership.objects.get(project=team, user=other_user)
    assert (added["subject_type"], added["subject_id"]) == ("membership", str(membership.pk))
    assert added["summary"] == "alice added bob as reviewer"


def test_the_activity_log_is_paged_like_the_other_lists(alice: APIClient, team: Project) -> None:
    Activity.objects.bulk_create([
        Activity(project=team, verb="dataset_uploaded", summary=f"upload {i}") for i in range(60)
    ])
    first = ok(alice.get(f"/api/projects/{team.pk}/activity/"))
    assert first["count"] == 61
    assert len(first["results"]) == 50
    assert first["next"]
    second = ok(alice.get(first["next"]))
    assert len(second["results"]) == 11
    assert second["next"] is None
    seen = {e["id"] for e in first["results"]} | {e["id"] for e in second["results"]}
    assert len(seen) == 61


# --- Rows carry their project, and lists take ?project= ---------------------------------------


@pytest.fixture
def spread(user: Any, team: Project, rows: Any) -> dict[str, Any]:
    """One dataset, model, job and batch in alice's personal project and one of each in team."""
    made: dict[str, Any] = {}
    for where in ("home", "team"):
        project = team if where == "team" else services.project_personal(user=user)
        dataset = rows.dataset(user, project=project, name=f"{where} set")
        model = rows.model(user, dataset, name=f"{where} model")
        made[where] = {
            "project": project, "datasets": dataset, "models": model,
            "jobs": rows.job(model), "batches": BatchJob.objects.create(
                owner=user, ml_model=model, filename=f"{where}.csv"),
        }
    return made


def _id(row: Any) -> Any:
    return row.pk.hex if isinstance(row, BatchJob) else row.pk


def test_every_list_row_and_detail_carries_its_project_and_project_narrows_the_lists(
    alice: APIClient, spread: dict[str, Any],
) -> None:
    home, team = spread["home"], spread["team"]
    for kind in ("datasets", "models", "jobs", "batches"):
        everything = ok(alice.get(f"/api/{kind}/"))["results"]
        assert {(row["id"], row["project"]) for row in everything} == {
            (_id(home[kind]), home["project"].pk), (_id(team[kind]), team["project"].pk)}, kind
        narrowed = ok(alice.get(f"/api/{kind}/?project={team['project'].pk}"))["results"]
        assert [row["id"] for row in narrowed] == [_id(team[kind])], kind
        detail = ok(alice.get(f"/api/{kind}/{_id(team[kind])}/"))
        assert detail["project"] == team["project"].pk, kind


def test_narrowing_to_a_project_you_are_not_in_is_a_404(
    alice: APIClient, other_user: Any, spread: dict[str, Any],
) -> None:
    bobs = services.project_personal(user=other_user)
    for kind in ("datasets", "models", "jobs", "batches"):
        for value in (bobs.pk, 999_999, "abc"):
            response = alice.get(f"/api/{kind}/?project={value}")
            assert response.status_code == 404, (kind, value)
            assert response.json() == {"detail": "No such project."}


def test_a_member_sees_the_projects_rows_in_their_lists_and_their_role_limits_the_rest(
    bob: APIClient, other_user: Any, spread: dict[str, Any],
) -> None:
    team = spread["team"]
    join(team["project"], other_user, "viewer")
    for kind in ("datasets", "models", "jobs", "batches"):
        assert [r["id"] for r in ok(bob.get(f"/api/{kind}/"))["results"]] == [_id(team[kind])]
    home_model = spread["home"]["models"]
    assert bob.get(f"/api/models/{home_model.pk}/").status_code == 404

    model, job = team["models"], team["jobs"]
    predict = bob.post(f"/api/models/{model.pk}/predict/", {"text": "heart"}, format="json")
    assert predict.status_code == 403
    assert predict.json()["detail"] == ("Classifying needs the reviewer role in this project; "
                                        "you are a viewer.")
    cancel = bob.post(f"/api/jobs/{job.pk}/cancel/")
    assert cancel.status_code == 403
    assert "maintainer role" in cancel.json()["detail"]
    train = bob.post("/api/jobs/", {"dataset": team["datasets"].pk,
                                    "model_type": "tfidf_logreg"}, format="json")
    assert train.status_code == 403
    assert "Training needs the maintainer role" in (
        train.json()["detail"])


def test_a_job_started_on_a_team_dataset_belongs_to_the_team(
    alice: APIClient, spread: dict[str, Any], django_capture_on_commit_callbacks: Any,
) -> None:
    team = spread["team"]
    with django_capture_on_commit_callbacks(execute=False):
        job = ok(alice.post("/api/jobs/", {"dataset": team["datasets"].pk,
                                           "model_type": "tfidf_logreg"}, format="json"), 201)
    assert job["project"] == team["project"].pk
    assert ok(alice.get(f"/api/models/{job['model_id']}/"))["project"] == team["project"].pk


# --- Uploads choose their project -------------------------------------------------------------


def upload(client: APIClient, **fields: Any) -> Any:
    with DEMO_SLICE.open("rb") as handle:
        return client.post("/api/datasets/", {"file": handle, **fields}, format="multipart")


def test_an_upload_goes_to_the_named_project_and_without_one_asks_which(
    alice: APIClient, user: Any, team: Project, media_root: Any,
) -> None:
    into_team = ok(upload(alice, name="Team copy", project=team.pk), 202)
    assert into_team["project"] == team.pk
    assert import_run_last().dataset.project_id == team.pk  # what the worker's task runs
    personal = services.project_personal(user=user)
    unnamed = upload(alice, name="My copy")  # two projects: never a silent choice (issue 38)
    assert unnamed.status_code == 400
    said = unnamed.json()["project"][0]
    assert f"{personal.pk} ({personal.name})" in said
    assert f"{team.pk} ({team.name})" in said


def test_an_upload_to_a_project_you_cannot_upload_to_is_refused(
    bob: APIClient, other_user: Any, team: Project, media_root: Any,
) -> None:
    not_in = upload(bob, project=team.pk)
    assert not_in.status_code == 400
    assert not_in.json() == {"project": ["No such project."]}

    join(team, other_user, "reviewer")
    too_low = upload(bob, project=team.pk)
    assert too_low.status_code == 403
    assert too_low.json()["detail"] == ("Uploading or importing a dataset needs the maintainer "
                                        "role in this project; you are a reviewer.")
    assert not Dataset.objects.exists()


# --- Reviews ----------------------------------------------------------------------------------


def test_a_reviewer_member_reviews_a_team_batch_whose_answers_carry_its_project(
    bob: APIClient, user: Any, other_user: Any, team: Project, rows: Any, media_root: Any,
) -> None:
    model = rows.model(user, rows.dataset(user, project=team))
    batch = completed_batch(user, model, MULTI_ROWS, LABELS)
    url = f"/api/batches/{batch.pk.hex}/review/"
    join(team, other_user, "viewer")
    queue = ok(bob.get(url))
    assert queue["project"] == team.pk
    assert {item["project"] for item in queue["items"]} == {team.pk}
    refused = bob.post(f"{url}1/", {"labels": ["cardiovascular"]})
    assert refused.status_code == 403
    assert refused.json()["detail"] == ("Reviewing and correcting labels needs the reviewer "
                                        "role in this project; you are a viewer.")

    join(team, other_user, "reviewer")
    saved = ok(bob.post(f"{url}1/", {"labels": ["cardiovascular"]}))
    assert saved["project"] == team.pk
    assert saved["item"]["project"] == team.pk
    assert saved["item"]["reviewer"] == "bob"


def test_the_project_lists_read_in_as_many_queries_however_many_rows(
    alice: APIClient, user: Any, team: Project,
) -> None:
    def queries(url: str) -> int:
        policy.role_forget(user)  # as a new request's user: forced auth keeps the object
        with CaptureQueriesContext(connection) as captured:
            ok(alice.get(url))
        return len(captured)

    urls = ["/api/projects/", f"/api/projects/{team.pk}/members/",
            f"/api/projects/{team.pk}/activity/"]
    queries(urls[0])  # the personal project is made on the first list
    before = [queries(url) for url in urls]
    for i in range(4):
        extra = services.project_create(user=user, name=f"Extra {i}")
        member = get_user_model().objects.create_user(f"member{i}", f"m{i}@example.org", "pw-1")
        join(team, member, "viewer")
        join(extra, member, "reviewer")
    assert [queries(url) for url in urls] == before
