"""Migration 0008 gives the records made before it the state their rows say (screening/
record_state.py): being screened, in conflict, excluded, marked no by the stop, at full text
sought, not retrieved, retrieved and waiting, included or excluded there - and a report decided
on before it was ever retrieved counts as sought, not assessed (issue 50, fault 3)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("screening", "0007_stopping_rule_default_confseq")]
AFTER = [("screening", "0008_record_state")]


def _migrate(targets: list[tuple[str, str]]) -> Any:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return MigrationExecutor(connection).loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_existing_records_get_the_state_their_rows_say() -> None:
    apps = _migrate(BEFORE)
    User = apps.get_model("auth", "User")
    Project = apps.get_model("projects", "Project")
    Dataset = apps.get_model("dataset_management", "Dataset")
    Session = apps.get_model("screening", "ScreeningSession")
    Record = apps.get_model("screening", "Record")
    Decision = apps.get_model("screening", "Decision")
    Report = apps.get_model("screening", "FullTextReport")
    alice, bob = User.objects.create(username="alice"), User.objects.create(username="bob")
    project = Project.objects.create(name="Review", personal_for=alice)
    dataset = Dataset.objects.create(owner=alice, project=project, name="abstracts")
    session = Session.objects.create(project=project, dataset=dataset, name="Old",
                                     labels=["onc"], reviewers_per_record=2)
    yes, no = {"onc": "yes"}, {"onc": "no"}
    rows = {  # name: (final, done, done_phase, reviewer_count, fulltext_final, report)
        "screening": ({}, False, "", 1, {}, None),
        "conflict": ({}, False, "", 2, {}, None),
        "excluded": (no, True, "ranked", 2, {}, None),
        "marked_no": (no, True, "stop", 0, {}, None),
        "sought": (yes, True, "ranked", 2, {}, None),
        "decided_unretrieved": (yes, True, "ranked", 2, yes, "sought"),
        "not_retrieved": (yes, True, "ranked", 2, {}, "not_retrieved"),
        "retrieved": (yes, True, "ranked", 2, {}, "retrieved"),
        "included": (yes, True, "sample", 2, yes, "retrieved"),
        "excluded_full_text": (yes, True, "ranked", 2, no, "retrieved"),
        "unsure": ({}, False, "", 2, {}, None),
    }
    made = {}
    for position, (name, (final, done, phase, count, ft, report)) in enumerate(rows.items()):
        made[name] = Record.objects.create(session=session, position=position, final=final,
                                           done=done, done_phase=phase, reviewer_count=count,
                                           fulltext_final=ft)
        if report:
            Report.objects.create(record=made[name], status=report)
    for person, value in ((alice, "yes"), (bob, "no")):
        Decision.objects.create(record=made["conflict"], reviewer=person, label="onc",
                                value=value)
    for person in (alice, bob):
        Decision.objects.create(record=made["unsure"], reviewer=person, label="onc",
                                value="unsure")

    apps = _migrate(AFTER)
    states = dict(apps.get_model("screening", "Record").objects.values_list("position",
                                                                           "state"))
    expected = {**{name: name for name in rows}, "decided_unretrieved": "sought",
                "unsure": "sought"}
    assert {name: states[made[name].position] for name in rows} == expected
    _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
