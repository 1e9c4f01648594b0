"""Screening asks projects.policy: a viewer may look but not decide, a reviewer may decide but
not resolve conflicts or stop, a stranger sees no session at all."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.http import Http404

from projects.policy import RoleRequired
from screening import selectors, services
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db


def test_each_role_is_held_to_its_actions(team) -> None:  # noqa: F811
    with pytest.raises(RoleRequired, match="maintainer"):
        services.session_create(user=team.reviewer, dataset=team.dataset, name="x",
                                labels=["oncological"])
    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="x",
                                      labels=["oncological"], reviewers_per_record=2)
    record = selectors.record_next(user=team.viewer, session=session)
    with pytest.raises(RoleRequired, match="Screening records needs the reviewer role"):
        services.decision_record(user=team.viewer, record=record, values={"oncological": "no"})
    services.decision_record(user=team.reviewer, record=record, values={"oncological": "no"})
    services.decision_record(user=team.reviewer2, record=record, values={"oncological": "yes"})
    with pytest.raises(RoleRequired, match="maintainer"):
        services.conflict_resolve(user=team.reviewer, record=record, label="oncological",
                                  value="no")
    with pytest.raises(RoleRequired, match="maintainer"):
        services.session_stop(user=team.reviewer, session=session, force=True)
    services.conflict_resolve(user=team.owner, record=record, label="oncological", value="no")
    stranger = get_user_model().objects.create_user("sam", "s@example.org", "pw-123456")
    with pytest.raises(Http404):
        selectors.session_get(user=stranger, pk=session.pk)
    assert selectors.session_get(user=team.viewer, pk=session.pk) == session
