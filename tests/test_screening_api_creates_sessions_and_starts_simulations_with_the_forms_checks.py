"""The API starts what the pages start, with the same checks: POST /api/screening/sessions/
answers 201 and the session's Location, or 400 with the form's or the service's message and
nothing made; POST /api/screening/simulations/ answers 202 with the job and a Location that
shows its state, then the command's summary once the inference worker has run it."""

from __future__ import annotations

import pytest
from django.core.files.base import ContentFile
from rest_framework.test import APIClient

from classification.models import MLModel
from dataset_management.models import Dataset
from dataset_management.services import dataset_create_from_upload
from projects import services as project_services
from screening import simulation_runs
from screening.models import Record, ScreeningSession, SimulationRun
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db

SESSIONS = "/api/screening/sessions/"
SIMULATIONS = "/api/screening/simulations/"


def _api(person) -> APIClient:
    api = APIClient()
    api.force_authenticate(person)
    return api


def test_a_session_is_created_with_defaults_and_a_location(team) -> None:  # noqa: F811
    answer = _api(team.maintainer).post(SESSIONS, {
        "name": "Onc", "dataset": team.dataset.pk, "labels": ["oncological", "neurological"],
        "reviewers_per_record": 2}, format="json")
    assert answer.status_code == 201, answer.content
    session = ScreeningSession.objects.get()
    assert answer["Location"].endswith(f"/api/screening/{session.pk}/")
    body = answer.json()
    assert (body["id"], body["records"], body["labels"]) == (
        session.pk, 12, ["oncological", "neurological"])
    assert (session.order, session.ranker_every, session.recall_target) == (
        "most_likely", 10, 0.95)
    assert body["starting_scoring"] is False
    listed = _api(team.reviewer).get(SESSIONS).json()["results"]
    assert [s["id"] for s in listed] == [session.pk]


def test_bad_input_is_a_400_with_the_forms_message_and_nothing_is_made(team, user) -> None:  # noqa: F811
    api = _api(team.maintainer)
    cardio = MLModel.objects.create(owner=team.owner, project=team.project, name="Cardio only",
                                    model_type="tfidf_logreg", dataset=team.dataset,
                                    status=MLModel.Status.TRAINED, artifact_path="x",
                                    label_names=["cardiovascular"])
    unknown = api.post(SESSIONS, {"name": "x", "dataset": team.dataset.pk,
                                  "labels": "oncological", "starting_model": cardio.pk},
                       format="json")
    assert unknown.status_code == 400
    assert "does not know the label(s) oncological" in unknown.json()["detail"]

    # The importer refuses a file without text, so such a collection is a dataset with no rows.
    bare = Dataset.objects.create(project=team.project, owner=team.owner, name="No texts")
    empty = api.post(SESSIONS, {"name": "x", "dataset": bare.pk, "labels": "oncological"},
                     format="json")
    assert empty.status_code == 400
    assert empty.json() == {"detail": "Dataset “No texts” has no rows to screen."}

    neither = api.post(SESSIONS, {"name": "x", "labels": "oncological"}, format="json")
    assert neither.json() == {"non_field_errors": [
        "Choose one collection to screen: a dataset or a finished batch."]}
    no_labels = api.post(SESSIONS, {"name": "x", "dataset": team.dataset.pk, "labels": ""},
                         format="json")
    assert list(no_labels.json()) == ["labels"]
    three = api.post(SESSIONS, {"name": "x", "dataset": team.dataset.pk, "labels": "a",
                                "reviewers_per_record": 3}, format="json")
    assert "reviewers_per_record" in three.json()

    outsider = project_services.project_create(user=user, name="Elsewhere")
    theirs = dataset_create_from_upload(
        owner=user, project=outsider, name="Not shared",
        uploaded_file=ContentFile(b"title,abstract\nA,B\n", name="a.csv"))
    hidden = api.post(SESSIONS, {"name": "x", "dataset": theirs.pk, "labels": "a"},
                      format="json")
    assert hidden.status_code == 400
    assert "Not shared" not in hidden.content.decode()
    assert "dataset" in hidden.json()
    assert not ScreeningSession.objects.exists()
    assert not Record.objects.exists()


def test_a_reviewer_may_not_start_a_session(team) -> None:  # noqa: F811
    refused = _api(team.reviewer).post(SESSIONS, {"name": "x", "dataset": team.dataset.pk,
                                                  "labels": "oncological"}, format="json")
    assert refused.status_code == 403
    assert "maintainer" in refused.content.decode()
    assert not ScreeningSession.objects.exists()


def test_a_simulation_answers_202_and_its_location_shows_the_result(team) -> None:  # noqa: F811
    api = _api(team.maintainer)
    answer = api.post(SIMULATIONS, {"dataset": team.dataset.pk, "label": "oncological",
                                    "seeds": 2, "every": 2, "patience": 3}, format="json")
    assert answer.status_code == 202, answer.content
    run = SimulationRun.objects.get()
    assert answer.json()["state"] == "queued"
    assert answer["Location"].endswith(f"/api/screening/simulations/{run.pk}/")
    waiting = api.get(answer["Location"]).json()
    assert (waiting["state"], waiting["result"]) == ("queued", None)
    simulation_runs.simulation_run_execute(run_id=run.pk)  # what the inference worker runs
    done = _api(team.viewer).get(answer["Location"]).json()
    assert done["state"] == "completed"
    summary = done["result"]["summary"]
    assert (summary["label"], summary["records"], len(summary["runs"])) == ("oncological", 12, 2)
    assert len(done["result"]["curves"]) == 2
    assert [r["id"] for r in api.get(SIMULATIONS).json()["results"]] == [run.pk]


def test_a_simulation_on_a_label_the_dataset_lacks_is_a_400(team) -> None:  # noqa: F811
    api = _api(team.maintainer)
    answer = api.post(SIMULATIONS, {"dataset": team.dataset.pk, "label": "dermatological"},
                      format="json")
    assert answer.status_code == 400
    assert "has no label 'dermatological'" in answer.json()["detail"]
    too_many = api.post(SIMULATIONS, {"dataset": team.dataset.pk, "label": "oncological",
                                      "seeds": 50}, format="json")
    assert list(too_many.json()) == ["seeds"]
    assert not SimulationRun.objects.exists()
