"""PRISMA 2020 counts from a session's own rows, and the flow diagram drawn from them.

Page, SVG and PNG read the same `prisma_counts`, and every box after identification counts one
column, the record's state (screening/record_state.py), so the diagram, the table and the
exports cannot disagree. Record-level counts (a record is one report): screened records are
those reviewers read (excluded at title/abstract, or at full text in any state); a record
marked no by the stopping rule is "marked ineligible by automation"; a record at full text is
a report sought; one whose report was not retrieved is counted there; only retrieved reports
are assessed: included when any label that reached full text is yes there, else excluded with
the reason of its first label (the session's label order). Reports sought and not retrieved
yet, or retrieved and not decided yet, are shown as "awaiting assessment" so the boxes always
add up.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from screening import prisma_sources, record_state
from screening.models import RecordState as S
from screening.models import ScreeningSession

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


def _fulltext(session: ScreeningSession, rows: list[tuple[Any, ...]]) -> dict[str, Any]:
    """The reports, counted by the records' states."""
    states = Counter(state for *_, state in rows)
    reasons: Counter = Counter()
    for _, _, ft_final, ft_reasons, _, state in rows:
        if state == S.EXCLUDED_FULL_TEXT:
            reasons[next((ft_reasons[label] for label in session.labels
                          if label in ft_final and ft_reasons.get(label)),
                         "no reason given")] += 1
    return {"reports_sought": sum(states[s] for s in record_state.FULL_TEXT_STATES),
            "reports_not_retrieved": states[S.NOT_RETRIEVED],
            "reports_assessed": sum(states[s] for s in record_state.ASSESSED_STATES),
            "reports_awaiting_assessment": states[S.SOUGHT] + states[S.RETRIEVED],
            "reports_excluded": states[S.EXCLUDED_FULL_TEXT],
            "reports_excluded_by_reason": dict(sorted(reasons.items(),
                                                      key=lambda kv: (-kv[1], kv[0]))),
            "studies_included": states[S.INCLUDED],
            # A record included at full text is one report.
            "reports_of_included_studies": states[S.INCLUDED]}


def prisma_counts(session: ScreeningSession) -> dict[str, Any]:
    """Every PRISMA 2020 box's count for the session, and per label the older counts."""
    rows = list(session.records.values_list("pk", "final", "fulltext_final",
                                            "fulltext_reasons", "done_phase", "state"))
    per_label = {}
    for label in session.labels:
        per_label[label] = {
            "included": sum(1 for _, f, *_ in rows if f.get(label) == "yes"),
            "excluded": sum(1 for _, f, *_ in rows if f.get(label) == "no"),
            "excluded_by_stopping_rule": sum(1 for _, f, _, _, p, _ in rows
                                             if p == "stop" and f.get(label) == "no"),
            # The state, not the full-text finals alone: a record that left full text is not
            # included there, so this column agrees with "Studies included".
            "included_at_full_text": sum(1 for _, _, ft, _, _, state in rows
                                         if state == S.INCLUDED and ft.get(label) == "yes"),
        }
    states = Counter(state for *_, state in rows)
    screened = states[S.EXCLUDED] + sum(states[s] for s in record_state.FULL_TEXT_STATES)
    # The maintainer's names and counts from before import (screening.prisma_sources).
    return prisma_sources.prisma_sources_applied(facts=session.source_facts, counts={
        "source": session.source, "collection": session.collection_name,
        **_identified(session, len(rows)),
        "records": len(rows),
        "screened": screened,
        "excluded_at_screening": states[S.EXCLUDED],
        "not_screened_marked_no": states[S.MARKED_NO],
        "not_yet_screened": states[S.SCREENING] + states[S.CONFLICT],
        "stopping_rule": _stopping_rule(session),
        **_fulltext(session, rows),
        "per_label": per_label,
    })
