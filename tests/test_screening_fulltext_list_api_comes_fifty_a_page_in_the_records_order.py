"""`GET /api/screening/<id>/fulltext/` pages like the other API lists: `{count, next, previous,
results}`, 50 a page, page 2 holds exactly the rest, the records in their order, each with its
report's status and its state."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from dataset_management.models import Dataset
from projects import services as project_services
from screening.models import Record, RecordState, ScreeningSession

pytestmark = pytest.mark.django_db

ROWS = 53  # one full page of 50 and three more


def test_the_records_at_full_text_come_fifty_a_page(user: Any) -> None:
    project = project_services.project_create(user=user, name="Many reports")
    dataset = Dataset.objects.create(project=project, owner=user, name="Collection",
                                     label_names=["oncological"])
    session = ScreeningSession.objects.create(project=project, dataset=dataset, name="Single",
                                              labels=["oncological"], blind=False)
    records = Record.objects.bulk_create(
        Record(session=session, position=i, title=f"Article {i}", reviewer_count=1, done=True,
               final={"oncological": "yes"}, state=RecordState.SOUGHT) for i in range(ROWS))
    Record.objects.create(session=session, position=ROWS, title="Excluded", done=True,
                          final={"oncological": "no"}, state=RecordState.EXCLUDED)
    api = APIClient()
    api.force_authenticate(user)

    first = api.get(f"/api/screening/{session.pk}/fulltext/").json()
    assert first["count"] == ROWS
    assert len(first["results"]) == 50
    assert first["previous"] is None
    assert "page=2" in first["next"]
    second = api.get(first["next"]).json()
    assert len(second["results"]) == ROWS - 50
    assert second["next"] is None
    rows = first["results"] + second["results"]
    assert [row["record"] for row in rows] == [record.pk for record in records]
    assert {(row["status"], row["state"]) for row in rows} == {("sought", "sought")}
