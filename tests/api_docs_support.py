"""Rows for the screening and saved-search request examples of /api/docs/: a dual-screened
session (unblinded) with one conflict, one record at full text with its report retrieved (a
full-text decision needs one) and records still to decide,
and a saved search, all in a team project of the owner (tests.screening_support)."""

from __future__ import annotations

from typing import Any

from literature import services as literature_services
from screening import selectors, services, tags
from tests.pdf_support import report_attach
from tests.screening_review_support import both_decide
from tests.screening_support import team_make


def screening_example_ids(owner: Any) -> dict[tuple[str, str], Any]:
    """Keys as the examples test reads them: (the path's first part, the id's name)."""
    team = team_make(owner)
    session = services.session_create(user=owner, dataset=team.dataset, name="Docs",
                                      labels=["oncological"], reviewers_per_record=2)
    conflict = both_decide(team, session, "yes", "no")
    at_full_text = both_decide(team, session, "yes", "yes")
    services.session_blinding_end(user=owner, session=session)
    report_attach(user=owner, record=at_full_text)
    # The tag the record-tag example puts (the define example names another).
    tags.tag_define(user=owner, session=session, name="needs translation")
    search = literature_services.saved_search_create(
        user=owner, project=team.project, name="Docs search", query="telomere*")
    return {("screening", "id"): session.pk, ("screening", "record"): at_full_text.pk,
            ("screening", "dataset"): team.dataset.pk,
            ("screening", "record:decide"): selectors.record_next(user=owner,
                                                                 session=session).pk,
            ("screening", "record:conflicts"): conflict.pk,
            ("screening", "record:skip"): selectors.record_next(user=owner, session=session).pk,
            ("screening", "record:record-tags"): conflict.pk, ("searches", "id"): search.pk,
            ("searches", "project"): team.project.pk}
