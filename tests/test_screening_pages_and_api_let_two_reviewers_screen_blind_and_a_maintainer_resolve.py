"""Through the pages' JSON endpoints and the API: a maintainer starts a session, two reviewers
screen blind, the conflict is resolved, kappa and the stopping panel show, exports download, and
a viewer is refused a decision with a 403 naming the role."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from projects.middleware import SESSION_KEY
from screening.models import ScreeningSession
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db


def _client(person) -> Client:
    client = Client()
    client.force_login(person)
    return client


def _decide(client: Client, session: ScreeningSession, value: str) -> dict:
    nxt = client.get(reverse("screening:next_json", args=[session.pk])).json()["record"]
    answer = client.post(reverse("screening:decide_json", args=[session.pk]),
                         data=json.dumps({"record": nxt["id"], "values": {"oncological": value},
                                          "note": f"said {value}"}),
                         content_type="application/json")
    assert answer.status_code == 200, answer.content
    return nxt


def test_the_whole_loop_through_pages_and_api(team) -> None:  # noqa: F811
    boss = _client(team.maintainer)
    store = boss.session
    store[SESSION_KEY] = team.project.pk
    store.save()
    created = boss.post(reverse("screening:list"), data={
        "name": "Onc", "dataset": team.dataset.pk, "labels": "oncological",
        "order": "most_likely", "reviewers_per_record": 2, "ranker_every": 10,
        "recall_target": 0.95, "confidence": 0.95})
    session = ScreeningSession.objects.get()
    assert created.status_code == 302
    assert created.url.endswith(f"/{session.pk}/")
    rita, remy = _client(team.reviewer), _client(team.reviewer2)
    first = _decide(rita, session, "yes")
    seen = remy.get(reverse("screening:next_json", args=[session.pk])).json()["record"]
    assert seen["id"] == first["id"]
    assert seen["mine"] == {}
    assert "said yes" not in str(seen)
    _decide(remy, session, "no")
    summary = boss.get(reverse("screening:summary_json", args=[session.pk])).json()
    assert summary["conflicts"] == 1
    assert summary["stopping"][0]["label"] == "oncological"
    page = boss.get(reverse("screening:detail", args=[session.pk])).content.decode()
    assert "said yes" in page
    assert "Cohen" in page
    viewer = _client(team.viewer)
    refused = viewer.post(reverse("screening:decide_json", args=[session.pk]),
                          data=json.dumps({"record": first["id"],
                                           "values": {"oncological": "no"}}),
                          content_type="application/json")
    assert refused.status_code == 403
    api = APIClient()
    api.force_authenticate(team.reviewer)
    assert api.post(f"/api/screening/{session.pk}/conflicts/", {
        "record": first["id"], "label": "oncological", "value": "yes"},
        format="json").status_code == 403
    api.force_authenticate(team.maintainer)
    [conflict] = api.get(f"/api/screening/{session.pk}/conflicts/").json()["results"]
    assert {d["value"] for d in conflict["decisions"]} == {"yes", "no"}
    resolved = api.post(f"/api/screening/{session.pk}/conflicts/", {
        "record": first["id"], "label": "oncological", "value": "yes"}, format="json")
    assert resolved.json()["final"] == {"oncological": "yes"}
    detail = api.get(f"/api/screening/{session.pk}/").json()
    assert detail["conflicts"] == 0
    assert detail["agreement"][0]["n"] == 1
    csv_text = b"".join(boss.get(reverse("screening:export", args=[session.pk, "csv"]))
                        .streaming_content).decode()
    assert "rita" in csv_text
    assert "remy" in csv_text
    assert boss.get(reverse("screening:export", args=[session.pk, "prisma"])).json()[
        "per_label"]["oncological"]["included"] == 1
    assert boss.get(reverse("screening:screen", args=[session.pk])).status_code == 200
