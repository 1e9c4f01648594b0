"""Full-text stage reads: which records (and labels) reached it, and what a person sees of a
record's report and its full-text decisions (blinding applies as at title/abstract)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.http import Http404

from projects import policy
from screening import selectors, visibility
from screening.models import Decision, FullTextReport, Record, ScreeningSession, Stage


def _all_unsure(session: ScreeningSession, records: Any) -> dict[int, set[str]]:
    """record id -> labels on which each of its N title/abstract reviewers said unsure: the
    reviewers could not tell from the abstract, so the report decides."""
    said: dict[tuple[int, str], list[str]] = defaultdict(list)
    candidates = (Decision.objects.filter(record__in=records, stage=Stage.TITLE_ABSTRACT,
                                          value="unsure").values("record_id"))
    for record_id, label, value in (Decision.objects.filter(
            record__in=candidates, stage=Stage.TITLE_ABSTRACT)
            .values_list("record_id", "label", "value")):
        said[(record_id, label)].append(value)
    out: dict[int, set[str]] = defaultdict(set)
    for (record_id, label), values in said.items():
        if len(values) >= session.reviewers_per_record and set(values) == {"unsure"}:
            out[record_id].add(label)
    return out


def fulltext_labels(*, record: Record, session: ScreeningSession) -> list[str]:
    """The labels for which the record is at full text: final yes at title/abstract, or
    unsure from every reviewer there (and not resolved no)."""
    unsure = _all_unsure(session, Record.objects.filter(pk=record.pk)).get(record.pk, set())
    return [label for label in session.labels if record.final.get(label) == "yes"
            or (label in unsure and label not in record.final)]


def fulltext_records(*, session: ScreeningSession) -> list[tuple[Record, list[str]]]:
    """Every record at full text with its labels there, in the records' order."""
    records = Record.objects.filter(session=session)
    unsure = _all_unsure(session, records)
    out = []
    for record in records.select_related("fulltext").order_by("position"):
        labels = [label for label in session.labels if record.final.get(label) == "yes"
                  or (label in unsure.get(record.pk, ()) and label not in record.final)]
        if labels:
            out.append((record, labels))
    return out


def fulltext_record_get(*, user: Any, session: ScreeningSession, pk: Any,
                        action: str = policy.Action.VIEW) -> tuple[Record, list[str]]:
    """A record of the session at full text, and its labels there; 404 for one not there.
    A blind reviewer before the stop gets policy.FullTextClosed (403) for every record alike:
    a 404 for some and not others would tell which passed title/abstract."""
    visibility.fulltext_require_open(user=user, session=session)
    record = selectors.record_get(user=user, session=session, pk=pk, action=action)
    labels = fulltext_labels(record=record, session=session)
    if not labels:
        raise Http404("This record has not reached the full-text stage.")
    return record, labels


def fulltext_report(*, record: Record) -> FullTextReport:
    """The record's report: its row once a PDF or "not retrieved" was recorded, else an unsaved
    one that is "sought" (a read writes nothing; PRISMA counts a record without a row as
    sought)."""
    return (FullTextReport.objects.filter(record=record).select_related("uploaded_by").first()
            or FullTextReport(record=record))


def fulltext_state(*, user: Any, record: Record, labels: list[str]) -> dict[str, Any]:
    """What `user` may see of the record at full text: the report, and the decisions and final
    values their sight allows (a blind reviewer: their own decisions only)."""
    session = record.session
    sight = visibility.session_sight(user=user, session=session)
    report = fulltext_report(record=record)
    decisions = [
        {"reviewer": d.reviewer.get_username(), "label": d.label, "value": d.value,
         "exclusion_reason": d.exclusion_reason, "note": d.note,
         "decided_at": d.decided_at.isoformat(), "mine": d.reviewer_id == user.pk}
        for d in record.decisions.filter(stage=Stage.FULL_TEXT).select_related("reviewer")
        .order_by("label", "reviewer_id") if sight.decision_shown(d)]
    finals = ({label: record.fulltext_final[label] for label in labels
               if label in record.fulltext_final} if sight.finals_shown else None)
    return {
        "record": record.pk, "position": record.position + 1, "labels": labels,
        "identity": visibility.record_identity(record=record),
        "status": report.status, "not_retrieved_reason": report.not_retrieved_reason,
        "text_chars": report.text_chars, "pages": report.pages,
        "uploaded_by": report.uploaded_by.get_username() if report.uploaded_by else None,
        "uploaded_at": report.uploaded_at.isoformat() if report.uploaded_at else None,
        "decisions": decisions, "final": finals,
        "reasons": ({label: record.fulltext_reasons.get(label, "") for label in finals
                     if finals[label] == "no"} if finals is not None else None),
        "exclusion_reasons": session.exclusion_reasons or []}
