"""Screening exports: decisions as CSV, RIS and JSON Lines, and PRISMA-style counts.

Each format carries, per record and label, every reviewer's value with the date and note, and
the final value with where it came from (agreed, resolved, or the stopping rule, whose
justification - test, N, n, k, r, p-value, target, confidence, time, user - goes with it).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from typing import Any

from dataset_management.export import csv_safe_cell
from screening import selectors
from screening.models import Record, ScreeningSession

CSV_COLUMNS = ["record", "id", "title", "label", "reviewer", "value", "decided_at", "note",
               "final", "final_source"]


def _records(session: ScreeningSession) -> Iterator[Record]:
    return (session.records.order_by("position")
            .prefetch_related("decisions__reviewer", "resolutions__resolver").iterator(2000))


def _source(record: Record, label: str) -> str:
    if record.done_phase == "stop" and label not in {d.label for d in record.decisions.all()}:
        return "stopping rule"
    if any(r.label == label for r in record.resolutions.all()):
        return "resolved"
    return "reviewers" if label in record.final else ""


def _stop_note(session: ScreeningSession, label: str) -> str:
    why = session.stop_justification or {}
    for state in why.get("labels", []):
        if state["label"] == label:
            return (f"marked no at the stop by {why.get('stopped_by')} on "
                    f"{why.get('stopped_at')}"
                    f"{' (forced)' if why.get('forced') else ''}: {state['test']}; "
                    f"N={state['pool']} n={state['sampled']} k={state['k']} r={state['r_seen']} "
                    f"p={state['p_value']:.4g} target={state['recall_target']} "
                    f"confidence={state['confidence']}")
    return ""


def record_lines(session: ScreeningSession) -> Iterator[dict[str, Any]]:
    """One dict per record: its decisions, resolutions and final values."""
    for record in _records(session):
        labels = {}
        for label in session.labels:
            labels[label] = {
                "final": record.final.get(label, ""), "source": _source(record, label),
                "decisions": [{"reviewer": d.reviewer.get_username(), "value": d.value,
                               "decided_at": d.decided_at.isoformat(), "note": d.note}
                              for d in record.decisions.all() if d.label == label],
                "resolution": next(({"resolver": r.resolver.get_username(), "value": r.value,
                                     "note": r.note, "resolved_at": r.resolved_at.isoformat()}
                                    for r in record.resolutions.all() if r.label == label), None),
            }
            if labels[label]["source"] == "stopping rule":
                labels[label]["note"] = _stop_note(session, label)
        yield {"record": record.position + 1, "id": record.ext_id, "title": record.title,
               "abstract": record.abstract, "labels": labels}


def export_jsonl(session: ScreeningSession) -> Iterator[str]:
    yield json.dumps({"session": session.name, "labels": session.labels,
                      "recall_target": session.recall_target, "confidence": session.confidence,
                      "stop_justification": session.stop_justification or None,
                      "agreement": selectors.agreement_table(session=session),
                      "prisma": prisma_counts(session)}, ensure_ascii=False) + "\n"
    for line in record_lines(session):
        yield json.dumps(line, ensure_ascii=False) + "\n"


def export_csv(session: ScreeningSession) -> Iterator[str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer)

    def flush() -> str:
        text = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        return text

    writer.writerow(CSV_COLUMNS)
    for line in record_lines(session):
        for label, about in line["labels"].items():
            rows = about["decisions"] or [{"reviewer": about["source"], "value": about["final"],
                                           "decided_at": "", "note": about.get("note", "")}]
            for d in rows:
                writer.writerow([csv_safe_cell(str(c)) for c in [
                    line["record"], line["id"], line["title"], label, d["reviewer"], d["value"],
                    d["decided_at"], d["note"], about["final"], about["source"]]])
        yield flush()


def export_ris(session: ScreeningSession) -> Iterator[str]:
    for line in record_lines(session):
        out = ["TY  - JOUR", f"TI  - {line['title']}", f"AB  - {line['abstract']}"]
        if line["id"]:
            out.append(f"ID  - {line['id']}")
        for label, about in line["labels"].items():
            if about["final"]:
                out.append(f"KW  - {label}: {'include' if about['final'] == 'yes' else 'exclude'}")
            for d in about["decisions"]:
                out.append(f"N1  - {label}: {d['reviewer']} said {d['value']} on "
                           f"{d['decided_at']}{' - ' + d['note'] if d['note'] else ''}")
            if about.get("note"):
                out.append(f"N1  - {label}: {about['note']}")
        yield "\n".join(o.replace("\n", " ") for o in out) + "\nER  - \n\n"


def _identified(session: ScreeningSession, records: int) -> dict[str, Any]:
    """PRISMA's first boxes, from the dataset's import report or the batch's facts as kept at
    creation (the batch itself is purged a week after it ran; the session is not)."""
    if session.source == ScreeningSession.Source.BATCH:
        facts = session.source_facts or {}
        without_text = int(facts.get("without_text", 0))
        return {"identified": int(facts.get("identified", records)), "duplicates_removed": 0,
                "duplicates_note": "a classified batch removes no duplicates, so 0",
                "removed_without_text": without_text}
    report = (session.dataset.report if session.dataset_id else None) or {}
    dropped = report.get("dropped_by_reason") or {}
    duplicates = sum(v for k, v in dropped.items() if "duplic" in k.lower())
    return {"identified": report.get("rows_read", records), "duplicates_removed": duplicates,
            "duplicates_note": ("" if duplicates else "the import report names no duplicate "
                                "removed, so 0")}


def prisma_counts(session: ScreeningSession) -> dict[str, Any]:
    """Identified, duplicates removed, screened, excluded and included per label."""
    finals = list(session.records.values_list("final", "done_phase"))
    per_label = {}
    for label in session.labels:
        per_label[label] = {
            "included": sum(1 for f, _ in finals if f.get(label) == "yes"),
            "excluded": sum(1 for f, _ in finals if f.get(label) == "no"),
            "excluded_by_stopping_rule": sum(1 for f, p in finals
                                             if p == "stop" and f.get(label) == "no"),
        }
    return {
        "source": session.source, "collection": session.collection_name,
        **_identified(session, len(finals)),
        "screened": sum(1 for _, p in finals if p in ("ranked", "sample")),
        "not_screened_marked_no": sum(1 for _, p in finals if p == "stop"),
        "per_label": per_label,
    }
