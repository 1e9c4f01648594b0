"""Moving a dataset takes the models trained on it, their jobs, batches and reviews along, to a
project where the mover is a maintainer too. Either side short of maintainer is refused (403,
naming the role); a project or dataset outside the mover's projects is 404. Both projects'
logs say what moved."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from classification.models import BatchJob, TrainingJob
from dataset_management.models import Dataset
from dataset_management.services import dataset_move
from projects import policy
from projects.models import Activity, Role
from projects.services import ProjectError, member_set, project_create, project_personal

pytestmark = pytest.mark.django_db


@pytest.fixture
def setting(user, rows):
    """Alice's dataset with a model, its job and a batch, and a second project of hers."""
    dataset = rows.dataset(user, name="Trials")
    model = rows.model(user, dataset, name="Trial screener")
    job = rows.job(model, status="completed")
    batch = BatchJob.objects.create(owner=user, ml_model=model, filename="a.csv")
    other_model = rows.model(user, rows.dataset(user, name="Other"), name="Unrelated")
    team = project_create(user=user, name="Team")
    return {"dataset": dataset, "model": model, "job": job, "batch": batch,
            "other_model": other_model, "team": team, "home": project_personal(user=user)}


def test_a_maintainer_of_both_moves_the_dataset_with_its_models_and_batches(user, setting):
    home, team = setting["home"], setting["team"]
    dataset_move(user=user, dataset=setting["dataset"], project=team)

    assert Dataset.objects.get(pk=setting["dataset"].pk).project == team
    setting["model"].refresh_from_db()
    assert setting["model"].project == team
    assert BatchJob.objects.get(pk=setting["batch"].pk).project == team
    assert policy.project_id_of(TrainingJob.objects.get(pk=setting["job"].pk)) == team.pk
    setting["other_model"].refresh_from_db()
    assert setting["other_model"].project == home  # trained on another dataset: stays
    left = Activity.objects.get(project=home, verb="dataset_moved")
    arrived = Activity.objects.get(project=team, verb="dataset_moved")
    assert left.summary == ("alice moved dataset “Trials” with 1 model(s) and 1 batch(es) "
                            "to “Team”")
    assert arrived.summary.endswith("here from “alice's project”")
    assert (left.actor, arrived.actor) == (user, user)


def test_moving_to_the_project_it_is_in_says_so(user, setting):
    with pytest.raises(ProjectError, match="is already in"):
        dataset_move(user=user, dataset=setting["dataset"], project=setting["home"])


@pytest.mark.parametrize(("source_role", "target_role"), [
    (Role.MAINTAINER, Role.REVIEWER), (Role.REVIEWER, Role.MAINTAINER), (Role.VIEWER, Role.OWNER),
])
def test_short_of_maintainer_on_either_side_is_refused(user, other_user, setting,
                                                       source_role, target_role):
    member_set(actor=user, project=setting["home"], member=other_user, role=source_role)
    member_set(actor=user, project=setting["team"], member=other_user, role=target_role)
    with pytest.raises(policy.RoleRequired, match="needs the maintainer role"):
        dataset_move(user=other_user, dataset=setting["dataset"], project=setting["team"])
    assert Dataset.objects.get(pk=setting["dataset"].pk).project == setting["home"]
    assert not Activity.objects.filter(verb="dataset_moved").exists()


def move(client, dataset, project):
    return client.post(reverse("datasets:move", args=[dataset.pk]), {"project": project.pk})


def test_the_move_form_moves_and_offers_only_projects_the_person_maintains(
        user, other_user, alice_client, setting):
    watched = project_create(user=other_user, name="Bob's lab")
    member_set(actor=other_user, project=watched, member=user, role=Role.VIEWER)
    page = alice_client.get(reverse("datasets:detail", args=[setting["dataset"].pk]))
    form = page.content.decode().split('id="move-card"')[1].split("</form>")[0]
    assert f'<option value="{setting["team"].pk}">Team</option>' in form
    assert "Bob&#x27;s lab" not in form
    assert "alice&#x27;s project" not in form

    response = move(alice_client, setting["dataset"], setting["team"])
    assert response.status_code == 302
    assert Dataset.objects.get(pk=setting["dataset"].pk).project == setting["team"]
    page = alice_client.get(response["Location"]).content.decode()
    assert "Moved “Trials” and its models to “Team”." in page

    refused = move(alice_client, setting["dataset"], watched)  # a viewer there
    assert refused.status_code == 403
    assert Dataset.objects.get(pk=setting["dataset"].pk).project == setting["team"]


def test_the_server_refuses_a_forged_move_with_403_or_404(user, other_user, bob_client,
                                                          setting):
    carol = get_user_model().objects.create_user("carol", "carol@example.org", "pw-123-abc")
    carols = project_create(user=carol, name="Carol's")
    dataset, home, team = setting["dataset"], setting["home"], setting["team"]

    assert move(bob_client, dataset, team).status_code == 404  # not in bob's projects
    member_set(actor=user, project=home, member=other_user, role=Role.VIEWER)
    member_set(actor=user, project=team, member=other_user, role=Role.MAINTAINER)
    page = bob_client.get(reverse("datasets:detail", args=[dataset.pk])).content.decode()
    assert 'id="move-card"' not in page
    assert move(bob_client, dataset, team).status_code == 403  # viewer where it is
    member_set(actor=user, project=home, member=other_user, role=Role.MAINTAINER)
    assert move(bob_client, dataset, carols).status_code == 404  # a project bob is not in
    member_set(actor=user, project=team, member=other_user, role=Role.REVIEWER)
    assert move(bob_client, dataset, team).status_code == 403  # reviewer where it would go
    assert Dataset.objects.get(pk=dataset.pk).project == home
    assert not Activity.objects.filter(verb="dataset_moved").exists()
