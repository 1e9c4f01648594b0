"""Two maintainers resolve the same title/abstract conflict at the same instant (issue 50,
fault 7): the record's row lock makes one of them first; the other is refused with the 409's
ScreeningConflict naming the winner, so exactly one resolution stands, the record's final value
is the winner's, and the log has one line."""

from __future__ import annotations

import threading

import pytest
from django.contrib.auth import get_user_model
from django.db import connection

from projects import services as project_services
from projects.models import Activity
from screening import services
from screening.errors import ScreeningConflict
from screening.models import Record, Resolution
from tests.screening_state_support import both_decide, dual_session
from tests.screening_support import team_make

pytestmark = pytest.mark.pg("two transactions racing for one record's row lock")


@pytest.mark.django_db(transaction=True)
def test_one_resolution_wins_and_the_other_is_told(user, media_root) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("SQLite has no row locks: the race needs PostgreSQL")
    team = team_make(user)
    session = dual_session(team)
    record = both_decide(team, session, ({"oncological": "yes"}, {"oncological": "no"}))
    lead = get_user_model().objects.create_user("lena", "lena@example.org", "pw-123456")
    project_services.member_set(actor=team.owner, project=team.project, member=lead,
                                role="maintainer")
    barrier, outcomes = threading.Barrier(2), {}

    def resolve(person, value) -> None:
        try:
            barrier.wait()
            services.conflict_resolve(user=person, record=Record.objects.get(pk=record.pk),
                                      label="oncological", value=value)
            outcomes[person.username] = "won"
        except ScreeningConflict as exc:
            outcomes[person.username] = str(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=resolve, args=args)
               for args in ((team.maintainer, "yes"), (lead, "no"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    winners = [name for name, said in outcomes.items() if said == "won"]
    assert len(winners) == 1, outcomes
    [loser] = set(outcomes) - set(winners)
    assert f"{winners[0]} already resolved oncological" in outcomes[loser]
    [standing] = Resolution.objects.filter(record=record)
    assert standing.resolver.username == winners[0]
    assert Record.objects.get(pk=record.pk).final == {"oncological": standing.value}
    assert Activity.objects.filter(verb="screening_resolve").count() == 1
