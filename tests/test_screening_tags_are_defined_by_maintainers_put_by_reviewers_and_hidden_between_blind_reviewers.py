"""Tags (issue 50): a maintainer defines a session's tags (a reviewer is refused, 403), reviewers
put them on records, each tag keeps who put it and when, and while the session is blind a
reviewer sees only their own tags - on the records page and over the API."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from projects.models import Activity
from screening.models import RecordTag, Tag
from tests.screening_review_support import cited_dataset_make, client_of, dual_session_make
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db


def _api(person: Any) -> APIClient:
    api = APIClient()
    api.force_authenticate(person)
    return api


@pytest.fixture
def session(team: Any) -> Any:  # noqa: F811
    return dual_session_make(team, cited_dataset_make(team))


def _tag(person: Any, session: Any, record: Any, tag: str) -> Any:
    return _api(person).post(reverse("api:screening_record_tags", args=[session.pk]),
                             {"record": record.pk, "tag": tag}, format="json")


def test_a_maintainer_defines_a_tag_and_the_definition_is_logged(team: Any, session: Any) -> None:  # noqa: F811
    answer = _api(team.maintainer).post(reverse("api:screening_tags", args=[session.pk]),
                                        {"name": "needs translation", "colour": "blue"},
                                        format="json")
    assert answer.status_code == 201, answer.content
    assert answer.json()["colour"] == "blue"
    assert Activity.objects.filter(verb="screening_tag_define",
                                   summary__contains="needs translation").exists()
    listed = _api(team.reviewer).get(reverse("api:screening_tags", args=[session.pk])).json()
    assert [t["name"] for t in listed["tags"]] == ["needs translation"]


def test_a_tag_name_is_unique_per_session_and_its_colour_from_the_palette(
        team: Any, session: Any) -> None:  # noqa: F811
    url = reverse("api:screening_tags", args=[session.pk])
    api = _api(team.maintainer)
    assert api.post(url, {"name": "RCT"}, format="json").status_code == 201
    twice = api.post(url, {"name": "rct"}, format="json")
    assert twice.status_code == 400
    assert "already has a tag" in twice.json()["detail"]
    pink = api.post(url, {"name": "other", "colour": "pink"}, format="json")
    assert pink.status_code == 400
    assert "colour" in pink.json()["detail"]
    assert Tag.objects.filter(session=session).count() == 1


def test_a_reviewer_may_not_define_a_tag(team: Any, session: Any) -> None:  # noqa: F811
    api = _api(team.reviewer).post(reverse("api:screening_tags", args=[session.pk]),
                                   {"name": "mine"}, format="json")
    assert api.status_code == 403
    assert "maintainer" in api.json()["detail"]
    page = client_of(team.reviewer).post(reverse("screening:records", args=[session.pk]),
                                         {"action": "define", "name": "mine"})
    assert page.status_code == 403
    assert not Tag.objects.filter(session=session).exists()


def test_a_reviewer_puts_a_tag_with_who_and_when_and_a_viewer_may_not(
        team: Any, session: Any) -> None:  # noqa: F811
    Tag.objects.create(session=session, name="RCT", created_by=team.maintainer)
    record = session.records.order_by("position").first()
    answer = _tag(team.reviewer, session, record, "RCT")
    assert answer.status_code == 201, answer.content
    put = RecordTag.objects.get()
    assert (put.record_id, put.tagged_by_id) == (record.pk, team.reviewer.pk)
    assert put.tagged_at is not None
    assert _tag(team.reviewer, session, record, "RCT").status_code == 201  # idempotent
    assert RecordTag.objects.count() == 1
    assert _tag(team.viewer, session, record, "RCT").status_code == 403
    unknown = _tag(team.reviewer, session, record, "nope")
    assert unknown.status_code == 400
    assert "RCT" in unknown.json()["detail"]  # names the tags it has


def test_the_page_puts_a_tag_and_takes_it_off(team: Any, session: Any) -> None:  # noqa: F811
    tag = Tag.objects.create(session=session, name="RCT", created_by=team.maintainer)
    record = session.records.order_by("position").first()
    url = reverse("screening:records", args=[session.pk])
    rita = client_of(team.reviewer)
    assert rita.post(url, {"action": "tag", "record": record.pk, "tag": tag.pk}).status_code == 302
    assert RecordTag.objects.filter(record=record, tagged_by=team.reviewer).exists()
    assert rita.post(url, {"action": "untag", "record": record.pk, "tag": tag.pk,
                           "tagged_by": "rita"}).status_code == 302
    assert not RecordTag.objects.exists()


def test_a_blind_reviewer_sees_only_their_own_tags(team: Any, session: Any) -> None:  # noqa: F811
    Tag.objects.create(session=session, name="rita-tag", created_by=team.maintainer)
    Tag.objects.create(session=session, name="remy-tag", created_by=team.maintainer)
    record = session.records.order_by("position").first()
    assert _tag(team.reviewer, session, record, "rita-tag").status_code == 201
    assert _tag(team.reviewer2, session, record, "remy-tag").status_code == 201
    url = reverse("api:screening_records", args=[session.pk])
    rows = {r["id"]: r for r in _api(team.reviewer).get(url).json()["results"]}
    assert [t["name"] for t in rows[record.pk]["tags"]] == ["rita-tag"]
    page = client_of(team.reviewer).get(reverse("screening:records", args=[session.pk]))
    table = page.content.decode().split('id="records-table"')[1].split("</table>")[0]
    assert 'class="tag tag-grey" title="rita' in table
    assert table.count('class="tag tag-') == 1  # remy's is not shown, nor who put it
    assert 'title="remy' not in table
    # Filtering by the other reviewer's tag finds nothing: their tags are not in sight.
    assert _api(team.reviewer).get(url, {"tag": "remy-tag"}).json()["count"] == 0
    # A maintainer sees both, with who put them.
    both = {r["id"]: r for r in _api(team.maintainer).get(url).json()["results"]}
    assert sorted((t["name"], t["by"]) for t in both[record.pk]["tags"]) == [
        ("remy-tag", "remy"), ("rita-tag", "rita")]


def test_a_reviewer_cannot_take_off_another_persons_tag(team: Any, session: Any) -> None:  # noqa: F811
    tag = Tag.objects.create(session=session, name="RCT", created_by=team.maintainer)
    record = session.records.order_by("position").first()
    assert _tag(team.reviewer2, session, record, "RCT").status_code == 201
    url = reverse("api:screening_record_tag", args=[session.pk, record.pk, tag.pk])
    assert _api(team.reviewer).delete(url + "?tagged_by=remy").status_code == 403
    assert _api(team.reviewer).delete(url).json() == {"removed": 0}
    assert RecordTag.objects.count() == 1
    assert _api(team.maintainer).delete(url + "?tagged_by=remy").json() == {"removed": 1}
