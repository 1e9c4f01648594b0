"""A simulation replays labels a dataset already has: a dataset not labelled for the label, or
not labelled at all, is refused before anything is queued, with a message naming what it has."""

from __future__ import annotations

import pytest
from django.core.files.base import ContentFile
from django.test import Client
from django.urls import reverse

from dataset_management.services import dataset_create_from_upload
from projects.middleware import SESSION_KEY
from screening import simulation_runs
from screening.models import SimulationRun
from screening.services import ScreeningError
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db


def test_a_label_the_dataset_lacks_is_refused_on_the_form(team) -> None:  # noqa: F811
    client = Client()
    client.force_login(team.maintainer)
    store = client.session
    store[SESSION_KEY] = team.project.pk
    store.save()
    page = client.post(reverse("screening:simulations"), data={
        "dataset": team.dataset.pk, "label": "dermatological", "recall_target": 0.95,
        "confidence": 0.95, "seeds": 2, "every": 10, "patience": 50})
    assert page.status_code == 200
    html = page.content.decode()
    assert "has no label &#x27;dermatological&#x27;: it is not labelled for it" in html
    assert "oncological" in html  # the labels it has
    assert not SimulationRun.objects.exists()


def test_an_unlabelled_dataset_is_refused_by_the_service(team) -> None:  # noqa: F811
    text = b"title,abstract\nStatins,Statins lowered events.\nGlioma,A tumour spread.\n"
    bare = dataset_create_from_upload(owner=team.owner, project=team.project, name="Bare",
                                      uploaded_file=ContentFile(text, name="bare.csv"))
    assert bare.label_names == []
    with pytest.raises(ScreeningError, match="“Bare” is not labelled"):
        simulation_runs.simulation_run_create(user=team.maintainer, dataset=bare,
                                              label="oncological")
    assert not SimulationRun.objects.exists()
