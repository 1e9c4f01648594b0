"""PRISMA 2020 counts from a session's own rows, and the flow diagram drawn from them.

Page, SVG and PNG read the same `prisma_counts`, so the diagram cannot disagree with the
exports. Record-level counts (a record is one report): screened records are those reviewers
read; a record marked no by the stopping rule is "marked ineligible by automation"; a record at
full text for any label (fulltext_selectors.fulltext_records: final yes at title/abstract, or
unsure from every reviewer) is a report sought; one whose report was not retrieved is counted
there; the rest, once every label that reached full text has a final value, are assessed:
included when any label is yes at full text, else excluded with the reason of its first label
(the session's label order). Reports sought but not yet assessed are shown as "awaiting
assessment" so the boxes always add up. Records excluded at screening are those screened with
no label at full text.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from screening import fulltext_selectors
from screening.models import FullTextReport, ScreeningSession

COLLECTION_KEY = "collection"  # dataset_management.collection.COUNTS_KEY: per-file counts


def _sources(session: ScreeningSession, identified: int) -> list[dict[str, Any]]:
    """Records identified per source file (a merged collection) or the one collection."""
    report = (session.dataset.report if session.dataset_id else None) or {}
    files = (report.get(COLLECTION_KEY) or {}).get("files") or []
    if files:
        return [{"name": f.get("name", ""), "identified": int(f.get("identified", 0))}
                for f in files]
    return [{"name": session.collection_name, "identified": identified}]


def _identified(session: ScreeningSession, records: int) -> dict[str, Any]:
    """PRISMA's first boxes, from the dataset's import report or the batch's facts as kept at
    creation (the batch itself is purged a week after it ran; the session is not)."""
    if session.source == ScreeningSession.Source.BATCH:
        facts = session.source_facts or {}
        without_text = int(facts.get("without_text", 0))
        identified = int(facts.get("identified", records))
        return {"identified": identified, "duplicates_removed": 0,
                "duplicates_note": "a classified batch removes no duplicates, so 0",
                "removed_without_text": without_text,
                "sources": [{"name": session.collection_name, "identified": identified}]}
    report = (session.dataset.report if session.dataset_id else None) or {}
    dropped = report.get("dropped_by_reason") or {}
    duplicates = sum(v for k, v in dropped.items() if "duplic" in k.lower())
    identified = int(report.get("rows_read", records))
    return {"identified": identified, "duplicates_removed": duplicates,
            "duplicates_note": ("" if duplicates else "the import report names no duplicate "
                                "removed, so 0"),
            "removed_other": max(0, sum(dropped.values()) - duplicates),
            "sources": _sources(session, identified)}


def _stopping_rule(session: ScreeningSession) -> str:
    why = session.stop_justification or {}
    if not why:
        return ""
    tests = sorted({state.get("test", "") for state in why.get("labels", [])} - {""})
    return ("; ".join(tests) or "the stopping rule") + (" (forced)" if why.get("forced") else "")


def _fulltext(session: ScreeningSession, at_fulltext: list[tuple[Any, list[str]]]
              ) -> dict[str, Any]:
    """The reports: every record at full text (fulltext_selectors decides which, per label)."""
    sought = not_retrieved = awaiting = included = 0
    reasons: Counter = Counter()
    for record, reached in at_fulltext:
        sought += 1
        report = getattr(record, "fulltext", None)
        ft_final, ft_reasons = record.fulltext_final, record.fulltext_reasons
        if report is not None and report.status == FullTextReport.Status.NOT_RETRIEVED:
            not_retrieved += 1
        elif any(label not in ft_final for label in reached):
            awaiting += 1
        elif any(ft_final[label] == "yes" for label in reached):
            included += 1
        else:
            reasons[next((ft_reasons[label] for label in reached if ft_reasons.get(label)),
                         "no reason given")] += 1
    return {"reports_sought": sought, "reports_not_retrieved": not_retrieved,
            "reports_assessed": sought - not_retrieved - awaiting,
            "reports_awaiting_assessment": awaiting,
            "reports_excluded": sum(reasons.values()),
            "reports_excluded_by_reason": dict(sorted(reasons.items(),
                                                      key=lambda kv: (-kv[1], kv[0]))),
            "studies_included": included}


def prisma_counts(session: ScreeningSession) -> dict[str, Any]:
    """Every PRISMA 2020 box's count for the session, and per label the older counts."""
    rows = list(session.records.values_list("pk", "final", "fulltext_final",
                                            "fulltext_reasons", "done_phase"))
    per_label = {}
    for label in session.labels:
        per_label[label] = {
            "included": sum(1 for _, f, *_ in rows if f.get(label) == "yes"),
            "excluded": sum(1 for _, f, *_ in rows if f.get(label) == "no"),
            "excluded_by_stopping_rule": sum(1 for _, f, _, _, p in rows
                                             if p == "stop" and f.get(label) == "no"),
            "included_at_full_text": sum(1 for _, _, ft, _, _ in rows if ft.get(label) == "yes"),
        }
    at_fulltext = fulltext_selectors.fulltext_records(session=session)
    sought = {record.pk for record, _ in at_fulltext}
    # Read by reviewers: done by them, or at full text already (unsure from every reviewer
    # is not a final value, yet the report decides it). Excluded: read, and not sought.
    screened = {pk for pk, *_, p in rows if p in ("ranked", "sample")} | sought
    return {
        "source": session.source, "collection": session.collection_name,
        **_identified(session, len(rows)),
        "records": len(rows),
        "screened": len(screened),
        "excluded_at_screening": len(screened - sought),
        "not_screened_marked_no": sum(1 for *_, p in rows if p == "stop"),
        "not_yet_screened": sum(1 for pk, *_, p in rows if not p and pk not in sought),
        "stopping_rule": _stopping_rule(session),
        **_fulltext(session, at_fulltext),
        "per_label": per_label,
    }
