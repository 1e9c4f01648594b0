"""Model, job and batch pages draw Train, Cancel, Resume, Delete and Ensemble only for a role
that may use them; the same request sent anyway is refused 403 with a sentence naming the role,
and changes nothing. A maintainer of the same project gets the buttons and may use them."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from classification.models import BatchJob, MLModel, TrainingJob
from projects.models import Role
from projects.services import member_set, project_personal

pytestmark = pytest.mark.django_db
MAINTAINER_SENTENCE = "needs the maintainer role in this project; you are a reviewer"


def member(owner: Any, name: str, role: str) -> Client:
    person = get_user_model().objects.create_user(name, f"{name}@example.org", f"{name}-pass-1")
    member_set(actor=owner, project=project_personal(user=owner), member=person, role=role)
    client = Client()
    client.force_login(person)
    session = client.session  # working in Alice's project, as the header's switcher would set
    session["project_id"] = project_personal(user=owner).pk
    session.save()
    return client


@pytest.fixture
def things(user, rows, media_root) -> dict[str, Any]:
    dataset = rows.dataset(user, name="Shared set")
    model = rows.model(user, dataset, name="Shared model", artifact_path="/nonexistent")
    twin = rows.model(user, dataset, name="Twin model", artifact_path="/nonexistent")
    failed = rows.job(model, status=TrainingJob.Status.FAILED, reason="boom")
    running = rows.job(twin)
    batch = BatchJob.objects.create(owner=user, ml_model=model, filename="done.csv",
                                    status=BatchJob.Status.COMPLETED)
    return {"dataset": dataset, "model": model, "twin": twin, "failed": failed,
            "running": running, "batch": batch}


def pages(t: dict[str, Any]) -> dict[str, str]:
    return {
        "models": reverse("classification:model_list"),
        "model": reverse("classification:model_detail", args=[t["model"].pk]),
        "failed job": reverse("classification:job_detail", args=[t["failed"].pk]),
        "running job": reverse("classification:job_detail", args=[t["running"].pk]),
        "batch": reverse("classification:batch_detail", args=[t["batch"].pk.hex]),
        "compare": reverse("classification:model_compare") + (
            f"?ids={t['model'].pk}&ids={t['twin'].pk}"),
    }


BUTTONS = [b'id="train-a-model"', b'id="find-best-model"', b'id="model-delete"',
           b'id="cancel-btn"', b'id="resume-btn"', b'id="batch-delete"', b'id="ensemble-form"']


def drawn(client: Client, t: dict[str, Any]) -> set[bytes]:
    found = set()
    for name, url in pages(t).items():
        response = client.get(url)
        assert response.status_code == 200, name
        found |= {button for button in BUTTONS if button in response.content}
    return found


def test_a_reviewer_sees_no_maintainer_button_and_a_forged_post_is_refused(
        user, things) -> None:
    reviewer = member(user, "rita", Role.REVIEWER)
    assert drawn(reviewer, things) == set()
    forged = {
        "train page": reviewer.get(reverse("classification:model_new")),
        "train": reviewer.post(reverse("classification:model_new"), {
            "dataset": things["dataset"].pk, "model_type": "tfidf_logreg", "preset": "quick"}),
        "search": reviewer.post(reverse("classification:search_new"), {
            "dataset": things["dataset"].pk, "time_budget_minutes": "1"}),
        "cancel": reviewer.post(reverse("classification:job_cancel", args=[things["running"].pk])),
        "resume": reviewer.post(reverse("classification:job_resume", args=[things["failed"].pk])),
        "delete model": reviewer.post(
            reverse("classification:model_delete", args=[things["model"].pk])),
        "delete batch": reviewer.post(
            reverse("classification:batch_delete", args=[things["batch"].pk.hex])),
        "ensemble": reviewer.post(reverse("classification:ensemble_create"),
                                  {"ids": [things["model"].pk, things["twin"].pk]}),
    }
    for name, response in forged.items():
        assert response.status_code == 403, name
        assert MAINTAINER_SENTENCE in response.content.decode(), name
    assert MLModel.objects.count() == 2
    assert BatchJob.objects.filter(pk=things["batch"].pk).exists()
    for job, status in ((things["failed"], "failed"), (things["running"], "running")):
        job.refresh_from_db()
        assert (job.status, job.cancel_requested, job.attempt) == (status, False, 1)


def test_a_maintainer_gets_the_buttons_and_may_use_them(user, things) -> None:
    maintainer = member(user, "mona", Role.MAINTAINER)
    assert drawn(maintainer, things) == set(BUTTONS)
    cancel = maintainer.post(reverse("classification:job_cancel", args=[things["running"].pk]))
    assert cancel.status_code == 302
    things["running"].refresh_from_db()
    assert things["running"].cancel_requested
    deleted = maintainer.post(reverse("classification:batch_delete",
                                      args=[things["batch"].pk.hex]))
    assert deleted.status_code == 302
    assert not BatchJob.objects.filter(pk=things["batch"].pk).exists()
