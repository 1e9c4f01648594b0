"""Each bad input of a screening session: a clear message, and nothing lost or half made."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from classification.models import MLModel
from dataset_management.models import Dataset
from projects import services as project_services
from screening import selectors, services
from screening.models import Decision, Record, ScreeningSession
from tests.screening_support import team, team_make  # noqa: F401


@pytest.mark.django_db
def test_a_collection_without_texts_is_refused_and_nothing_is_created(team) -> None:  # noqa: F811
    empty = Dataset.objects.create(project=team.project, owner=team.owner, name="No texts")
    with pytest.raises(services.ScreeningError, match="no rows to screen"):
        services.session_create(user=team.maintainer, dataset=empty, name="x",
                                labels=["oncological"])
    assert not ScreeningSession.objects.exists()
    assert not Record.objects.exists()


@pytest.mark.django_db
def test_a_label_the_starting_model_does_not_know_is_refused_at_creation(team) -> None:  # noqa: F811
    model = MLModel.objects.create(owner=team.owner, project=team.project, name="Cardio only",
                                   model_type="tfidf_logreg", dataset=team.dataset,
                                   label_names=["cardiovascular"])
    with pytest.raises(services.ScreeningError, match=r"does not know the label.*oncological"):
        services.session_create(user=team.maintainer, dataset=team.dataset, name="x",
                                labels=["oncological"], starting_model=model)
    assert not ScreeningSession.objects.exists()


@pytest.mark.django_db
def test_a_reviewer_removed_mid_session_keeps_their_decisions_but_cannot_decide(team) -> None:  # noqa: F811
    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="x",
                                       labels=["oncological"])
    record = selectors.record_next(user=team.reviewer, session=session)
    services.decision_record(user=team.reviewer, record=record, values={"oncological": "no"})
    project_services.member_remove(user=team.owner, project=team.project, member=team.reviewer)
    team.reviewer.__dict__.pop("_project_roles", None)
    other = Record.objects.filter(session=session, done=False).first()
    with pytest.raises(services.ScreeningError, match=r"no longer a member.*1 decision"):
        services.decision_record(user=team.reviewer, record=other, values={"oncological": "no"})
    kept = Decision.objects.get(record=record)
    assert kept.reviewer == team.reviewer
    assert kept.value == "no"


@pytest.mark.django_db
def test_a_repeated_submission_by_one_reviewer_keeps_one_row_with_the_last_value(team) -> None:  # noqa: F811
    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="x",
                                       labels=["oncological"], reviewers_per_record=2)
    record = selectors.record_next(user=team.reviewer, session=session)
    services.decision_record(user=team.reviewer, record=record, values={"oncological": "yes"})
    services.decision_record(user=team.reviewer, record=record, values={"oncological": "no"},
                             note="second thoughts")
    [row] = Decision.objects.filter(record=record)
    assert (row.value, row.note) == ("no", "second thoughts")
    record.refresh_from_db()
    assert record.reviewer_count == 1


@pytest.mark.django_db(transaction=True)
def test_two_reviewers_deciding_the_same_record_at_once_are_both_kept(user, media_root) -> None:
    team = team_make(user)  # noqa: F811
    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="x",
                                      labels=["oncological"], reviewers_per_record=2)
    record = selectors.record_next(user=team.reviewer, session=session)
    barrier, errors = threading.Barrier(2), []

    def decide(person, value) -> None:
        try:
            barrier.wait()
            services.decision_record(user=person, record=record, values={"oncological": value})
        except Exception as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=decide, args=(p, "yes"))
               for p in (team.reviewer, team.reviewer2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    record.refresh_from_db()
    assert Decision.objects.filter(record=record).count() == 2
    assert record.reviewer_count == 2
    assert record.done
    assert record.final == {"oncological": "yes"}
