"""Issue 36, point 4: a session can hold the `confseq` rule. Created through the API, read in
ranked order, then at random after the switch: the page and the API name the rule, its
citation and assumptions, the claimable recall is the one screening.stopping_cs computes for
the same draws from the same prior, and the stop is offered exactly when that bound reaches
the target (refused before, allowed from then on)."""

from __future__ import annotations

import pytest
from django.core.files.base import ContentFile
from django.test import Client
from django.urls import reverse
from django.utils.html import escape
from rest_framework.test import APIClient

from dataset_management.services import dataset_create_from_upload
from screening import selectors, services, stopping_cs, stopping_rules
from screening.models import ScreeningSession
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db

RECORDS, RELEVANT, RANKED = 90, 15, 30


def _collection(team):  # noqa: F811
    rows = ["title,abstract,label"] + [
        (f"Cancer trial {i},Tumour response in arm {i}.,oncological" if i % (RECORDS // RELEVANT)
         == 0 else f"Statin study {i},Lipids fell in group {i}.,cardiovascular")
        for i in range(RECORDS)]
    return dataset_create_from_upload(
        owner=team.owner, project=team.project, name="Ninety",
        uploaded_file=ContentFile("\n".join(rows).encode(), name="ninety.csv"))


def _read(team, session) -> bool:  # noqa: F811
    """The reviewer reads the next record and says whether it is relevant (its title says)."""
    record = selectors.record_next(user=team.reviewer, session=session)
    relevant = record.title.startswith("Cancer")
    services.decision_record(user=team.reviewer, record=record,
                             values={"oncological": "yes" if relevant else "no"})
    return relevant


def _expected(*, ranked: list[bool], draws: list[bool], pool: int,
              session: ScreeningSession) -> stopping_cs.PoolBound:
    """The bound stopping_cs computes for these draws, from the prior the simulation uses."""
    prior_a, prior_b = stopping_cs.prior_from_ranked(recent=[int(x) for x in ranked])
    bound = stopping_cs.PoolBound(pool=pool, r_al=sum(ranked), alpha=1 - session.confidence,
                                  prior_a=prior_a, prior_b=prior_b)
    for relevant in draws:
        bound.observe(relevant=relevant)
    return bound


def test_a_confseq_session_claims_what_the_sequence_computes_and_stops_exactly_at_the_target(
        team) -> None:  # noqa: F811
    api = APIClient()
    api.force_authenticate(team.maintainer)
    created = api.post("/api/screening/sessions/", {
        "name": "CS", "dataset": _collection(team).pk, "labels": ["oncological"],
        "recall_target": 0.8, "confidence": 0.9, "stopping_rule": "confseq"}, format="json")
    assert created.status_code == 201, created.content
    session = ScreeningSession.objects.get(pk=created.json()["id"])
    assert session.stopping_rule == "confseq"
    rule = stopping_rules.RULES["confseq"]
    assert created.json()["stopping_panel"]["rule"] == "confseq"

    ranked = [_read(team, session) for _ in range(RANKED)]
    session = services.sampling_start(user=team.maintainer, session=session)
    assert session.sampling_pool == RECORDS - RANKED
    draws: list[bool] = []
    previous = None
    while True:
        state = selectors.stopping_table(session=session)[0]
        bound = _expected(ranked=ranked, draws=draws, pool=session.sampling_pool,
                          session=session)
        assert (state["sampled"], state["k"], state["left_upper"]) == (
            len(draws), sum(draws), bound.left_upper)
        assert state["claimable_recall"] == bound.claimable_recall()
        assert state["can_stop"] == (bound.claimable_recall() >= session.recall_target)
        # the p-value at this look below alpha means every K below the target is excluded now
        assert state["p_value"] >= 1 - session.confidence or state["can_stop"]
        if state["can_stop"]:
            break
        with pytest.raises(services.ScreeningError, match="not met yet"):
            services.session_stop(user=team.maintainer, session=session)
        previous = state
        draws.append(_read(team, session))
    # the stop came at the first look where the bound reached the target, before the pool ran
    # out, after at least one look that did not allow it
    assert previous is not None
    assert previous["claimable_recall"] < session.recall_target
    assert len(draws) < session.sampling_pool
    assert state["prior_b"] == stopping_cs.prior_from_ranked(
        recent=[int(x) for x in ranked])[1]

    detail = api.get(f"/api/screening/{session.pk}/").json()
    assert detail["stopping"][0]["claimable_recall"] == state["claimable_recall"]
    assert detail["stopping_panel"]["title"] == rule.title
    assert detail["stopping_panel"]["sampled_read"] == len(draws)
    assert detail["stopping_panel"]["read"] == RANKED + len(draws)
    client = Client()
    client.force_login(team.reviewer)
    page = client.get(reverse("screening:detail", args=[session.pk])).content.decode()
    assert rule.title in page
    assert escape(rule.citation) in page
    assert rule.assumptions[0] in page
    assert (f"At most {state['left_upper']} relevant record(s) are left unread (confidence "
            f"{session.confidence}), so recall is at least {state['claimable_recall']:.3f}."
            in page)

    session = services.session_stop(user=team.maintainer, session=session)
    assert session.phase == "stopped"
    assert session.stop_justification["forced"] is False
    assert session.stop_justification["labels"][0]["test"].startswith(stopping_cs.TEST_NAME)


def test_the_confseq_choice_is_offered_on_the_form_and_is_the_default(
        team) -> None:  # noqa: F811
    client = Client()
    client.force_login(team.maintainer)
    page = client.get(reverse("screening:list")).content.decode()
    assert 'value="confseq"' in page
    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="x",
                                      labels=["oncological"])
    assert session.stopping_rule == stopping_rules.DEFAULT_RULE == "confseq"
