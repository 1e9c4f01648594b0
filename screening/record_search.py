"""Search and filter a session's records by text, tag, decision, reviewer and stage, within what
the person may see (their Sight): a blind reviewer filters by their own decisions and tags only,
never by another reviewer or by the stage (which follows the final values).

Text is a case-insensitive substring of the title, abstract, authors, keywords or record id: one
pass over the session's rows (found through the session's index), the same on SQLite and
PostgreSQL, with no search index to keep in step with the records.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.db.models.fields.json import KeyTransform

from projects import policy
from screening import tags
from screening.errors import ScreeningError
from screening.identity import record_title_shown
from screening.models import Decision, Record, RecordState, RecordTag, ScreeningSession, Stage
from screening.visibility import Sight

S = RecordState
STAGES: dict[str, tuple[str, ...]] = {
    "title_abstract": (S.SCREENING, S.CONFLICT),
    "full_text": (S.SOUGHT, S.RETRIEVED, S.NOT_RETRIEVED),
    "included": (S.INCLUDED,),
    "excluded": (S.EXCLUDED, S.MARKED_NO, S.EXCLUDED_FULL_TEXT),
}
DECISIONS = ("yes", "no", "unsure", "undecided")
TEXT_MAX = 200


def _text_q(text: str) -> Q:
    return (Q(title__icontains=text) | Q(abstract__icontains=text) | Q(ext_id__icontains=text)
            | Q(citation__authors__icontains=text) | Q(citation__keywords__icontains=text))


def _reviewer(*, session: ScreeningSession, reviewer: str, sight: Sight) -> Any:
    if not policy.screening_filter_by_reviewer(sight=sight.mode):
        raise ScreeningError("While the session is blind you cannot filter by reviewer: "
                             "another reviewer's decisions are not shown to you.")
    person = get_user_model().objects.filter(**{
        ("pk" if reviewer.isdigit() else "username"): reviewer}).first()
    if person is None or not Decision.objects.filter(record__session=session,
                                                     reviewer=person).exists():
        raise ScreeningError(f"“{reviewer}” has no decisions in this session.")
    return person


def _final_q(*, session: ScreeningSession, decision: str) -> tuple[dict[str, Any], Q]:
    """Filter by final values: what a viewer of a blind session sees instead of decisions."""
    if decision == "unsure":
        raise ScreeningError("You see the final decisions of this blind session only: filter "
                             "by yes, no or undecided.")
    keys = {f"final_{i}": KeyTransform(label, "final") for i, label in enumerate(
        session.labels)}
    if decision == "undecided":
        return keys, Q(**{f"{key}__isnull": True for key in keys})
    found = Q()
    for key in keys:
        found |= Q(**{key: decision})
    return keys, found


def _decision_filter(records: QuerySet[Record], *, session: ScreeningSession, sight: Sight,
                     decision: str, person: Any) -> QuerySet[Record]:
    if decision not in DECISIONS:
        raise ScreeningError(f"Filter the decision by {', '.join(DECISIONS)}.")
    if sight.mode == policy.ScreeningSight.FINAL:
        keys, found = _final_q(session=session, decision=decision)
        return records.alias(**keys).filter(found)
    said = Decision.objects.filter(record=OuterRef("pk"), stage=Stage.TITLE_ABSTRACT)
    if sight.mode == policy.ScreeningSight.OWN:
        said = said.filter(reviewer_id=sight.user_id)
    elif person is not None:
        said = said.filter(reviewer=person)
    if decision == "undecided":
        return records.exclude(Exists(said))
    return records.filter(Exists(said.filter(value=decision)))


def record_search(*, session: ScreeningSession, sight: Sight, text: str | None = None,
                  tag: str | None = None, decision: str | None = None,
                  reviewer: str | None = None, stage: str | None = None) -> QuerySet[Record]:
    """The session's records that match every filter given, in the collection's order.

    ScreeningError (the person's message) for a filter that is not known, or not open to this
    sight: the reviewer or the stage for a blind reviewer.
    """
    records = Record.objects.filter(session=session).defer("scores", "truth")
    text = " ".join(str(text or "").split())
    if len(text) > TEXT_MAX:
        raise ScreeningError(f"Search for at most {TEXT_MAX} characters.")
    if text:
        records = records.filter(_text_q(text))
    if tag:
        tagged = RecordTag.objects.filter(record=OuterRef("pk"),
                                          tag=tags.tag_get(session=session, name=tag))
        if not policy.screening_others_tags_shown(sight=sight.mode):
            tagged = tagged.filter(tagged_by_id=sight.user_id)
        records = records.filter(Exists(tagged))
    person = _reviewer(session=session, reviewer=str(reviewer), sight=sight) if reviewer else None
    if decision:
        records = _decision_filter(records, session=session, sight=sight, decision=decision,
                                   person=person)
    elif person is not None:
        records = records.filter(Exists(Decision.objects.filter(
            record=OuterRef("pk"), reviewer=person, stage=Stage.TITLE_ABSTRACT)))
    if stage:
        if stage not in STAGES:
            raise ScreeningError(f"Filter the stage by {', '.join(STAGES)}.")
        if not policy.screening_filter_by_stage(sight=sight.mode):
            raise ScreeningError("While the session is blind you cannot filter by stage: a "
                                 "record's stage follows the other reviewer's answers.")
        records = records.filter(state__in=STAGES[stage])
    return records.order_by("position")


def record_rows(*, records: list[Record], sight: Sight) -> list[dict[str, Any]]:
    """One page of records as the list shows them: identity, tags and the decisions in sight
    (two queries for the page)."""
    ids = [record.pk for record in records]
    shown_tags = tags.record_tags_shown(record_ids=ids, sight=sight)
    said: dict[int, list[dict[str, Any]]] = {pk: [] for pk in ids}
    for d in (Decision.objects.filter(record_id__in=ids, stage=Stage.TITLE_ABSTRACT)
              .select_related("reviewer").order_by("pk")):
        if sight.decision_shown(d):
            said[d.record_id].append({"reviewer": d.reviewer.get_username(), "label": d.label,
                                      "value": d.value})
    outcomes = policy.screening_outcomes_shown(sight=sight.mode)
    return [{"id": record.pk, "row": record.position + 1, "ext_id": record.ext_id,
             "title": record_title_shown(record=record), "tags": shown_tags.get(record.pk, []),
             "decisions": said[record.pk],
             "final": record.final if sight.finals_shown else None,
             "state": record.state if outcomes else None} for record in records]


FILTERS = ("q", "tag", "decision", "reviewer", "stage")


def search_filters(params: Any) -> dict[str, str]:
    """The filters of a query string or a JSON object (`q` is the text), as record_search
    takes them; those left empty are left out."""
    found = {key: str(params.get(key) or "").strip() for key in FILTERS}
    return {("text" if key == "q" else key): value for key, value in found.items() if value}
