"""Kappa and its confidence interval: the session page shows two decimals and the interval as
[a, b]; the API and the JSON Lines export keep every digit, for a methods section to round."""

from __future__ import annotations

import json
import math

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from screening import export, services
from screening.agreement import Z_95
from screening.models import Record
from screening.visibility import SIGHT_ALL
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db

# Five records read by both: they agree on four. Rita says yes twice, Remy once:
# p_o = 0.8, p_e = 0.4*0.2 + 0.6*0.8 = 0.56, kappa = 0.24 / 0.44 = 0.5454...
ANSWERS = [("yes", "yes"), ("no", "no"), ("no", "no"), ("yes", "no"), ("no", "no")]
KAPPA = 0.24 / 0.44
SE = math.sqrt(0.8 * 0.2 / (5 * 0.44 ** 2))


def test_the_page_rounds_and_the_api_and_export_do_not(team) -> None:  # noqa: F811
    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="Onc",
                                      labels=["oncological"], reviewers_per_record=2)
    records = Record.objects.filter(session=session).order_by("position")[:len(ANSWERS)]
    for record, (rita, remy) in zip(records, ANSWERS, strict=True):
        services.decision_record(user=team.reviewer, record=record, values={"oncological": rita})
        services.decision_record(user=team.reviewer2, record=record,
                                 values={"oncological": remy})
    shown = "κ = 0.55 [-0.25, 1.00]"
    client = Client()
    client.force_login(team.maintainer)
    page = client.get(reverse("screening:detail", args=[session.pk])).content.decode()
    assert shown in page
    assert "0.545" not in page
    polled = client.get(reverse("screening:summary_json", args=[session.pk])).json()
    assert polled["agreement"][0]["kappa_display"] == shown
    # What the page's script prints from the poll is rounded the same way.
    assert (polled["agreement"][0]["kappa"], polled["agreement"][0]["kappa_low"]) == (0.55, -0.25)

    api = APIClient()
    api.force_authenticate(team.maintainer)
    [row] = api.get(f"/api/screening/{session.pk}/").json()["agreement"]
    assert row["kappa"] == pytest.approx(KAPPA, rel=1e-12)
    assert row["kappa_low"] == pytest.approx(KAPPA - Z_95 * SE, rel=1e-12)
    assert row["kappa_high"] == 1.0  # clipped
    header = json.loads(next(iter(export.export_jsonl(session, sight=SIGHT_ALL))))
    assert header["agreement"][0]["kappa"] == pytest.approx(KAPPA, rel=1e-12)
    assert header["agreement"][0]["kappa"] != round(KAPPA, 4)
