"""Every setting has a range (issue 35, item 9; issue 37, point 5): a numeric screening setting
out of range - `ranker_every` of 10**12, which overflowed PostgreSQL's integer column as a 500 -
is a 400 naming the field from the API, a form error on the page, and a refusal from
simulate_screening, all from one schema (screening.forms.SETTING_RANGES). Nothing is made."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.test import APIClient

from projects.middleware import SESSION_KEY
from screening.forms import SETTING_RANGES, SessionForm, SimulationForm
from screening.models import ScreeningSession, SimulationRun
from tests.screening_review_support import client_of
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db
HUGE = 10**12

SESSION_CASES = [
    ("ranker_every", HUGE), ("ranker_every", 0), ("ranker_every", -5), ("ranker_every", "many"),
    ("ranker_every", [3]), ("reviewers_per_record", 3), ("reviewers_per_record", HUGE),
    ("recall_target", 1.5), ("recall_target", "nan"), ("recall_target", "inf"),
    ("confidence", 0.1), ("confidence", HUGE),
]
SIMULATION_CASES = [("seeds", HUGE), ("seeds", 21), ("every", HUGE), ("patience", HUGE),
                    ("patience", 0), ("recall_target", -1), ("confidence", 1)]


def _api(person: Any) -> APIClient:
    api = APIClient()
    api.force_authenticate(person)
    return api


def _session_body(team: Any, **override: Any) -> dict[str, Any]:  # noqa: F811
    return {"name": "Ranges", "dataset": team.dataset.pk, "labels": ["oncological"], **override}


@pytest.mark.pg("integer overflow differs: PostgreSQL's integer column refused 10**12 as a 500")
@pytest.mark.parametrize(("field", "value"), SESSION_CASES)
def test_a_session_setting_out_of_range_is_a_400_naming_it(team, field: str,  # noqa: F811
                                                           value: Any) -> None:
    answer = _api(team.maintainer).post(reverse("api:screening_sessions"),
                                        _session_body(team, **{field: value}), format="json")
    assert answer.status_code == 400, answer.content
    assert list(answer.json()) == [field]
    assert not ScreeningSession.objects.exists()


@pytest.mark.pg("integer overflow differs: the upper bounds fit PostgreSQL's integer columns")
def test_the_largest_settings_in_range_are_stored(team) -> None:  # noqa: F811
    highest = {name: SETTING_RANGES[name][2] for name in
               ("ranker_every", "reviewers_per_record", "recall_target", "confidence")}
    answer = _api(team.maintainer).post(reverse("api:screening_sessions"),
                                        _session_body(team, **highest), format="json")
    assert answer.status_code == 201, answer.content
    session = ScreeningSession.objects.get()
    assert (session.ranker_every, session.reviewers_per_record) == (10_000, 2)


@pytest.mark.parametrize(("field", "value"), SIMULATION_CASES)
def test_a_simulation_setting_out_of_range_is_a_400_naming_it(team, field: str,  # noqa: F811
                                                              value: Any) -> None:
    answer = _api(team.maintainer).post(reverse("api:screening_simulations"), {
        "dataset": team.dataset.pk, "label": "oncological", field: value}, format="json")
    assert answer.status_code == 400, answer.content
    assert field in answer.json()
    assert not SimulationRun.objects.exists()


def test_the_page_form_says_which_field_and_its_range(team) -> None:  # noqa: F811
    client = client_of(team.maintainer)
    store = client.session
    store[SESSION_KEY] = team.project.pk
    store.save()
    page = client.post(reverse("screening:list"), data={
        "name": "Ranges", "dataset": team.dataset.pk, "labels": "oncological",
        "order": "most_likely", "reviewers_per_record": 1, "ranker_every": HUGE,
        "recall_target": 0.95, "confidence": 0.95})
    assert page.status_code == 200
    assert "less than or equal to 10000" in page.content.decode()
    assert not ScreeningSession.objects.exists()


def test_the_command_refuses_what_the_forms_refuse(team) -> None:  # noqa: F811
    for option, value in (("--every", HUGE), ("--patience", 0), ("--seeds", 21),
                          ("--recall-target", 2), ("--reviewers", 3)):
        with pytest.raises(CommandError, match="must"):
            call_command("simulate_screening", "--dataset", str(team.dataset.pk),
                         "--label", "oncological", option, str(value))


def test_every_numeric_field_of_the_forms_is_bounded_by_the_schema() -> None:
    """A new numeric setting added without a range would be unbounded again: each form's
    numeric fields are exactly the schema's, with its bounds."""
    for form_class in (SessionForm, SimulationForm):
        for name, field in form_class.base_fields.items():
            if hasattr(field, "max_value"):
                kind, low, high = SETTING_RANGES[name]
                assert (field.min_value, field.max_value) == (kind(low), kind(high)), name
