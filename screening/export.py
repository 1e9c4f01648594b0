"""Screening exports: decisions as CSV, RIS and JSON Lines, and PRISMA-style counts.

Each format carries, per record, what traces it back to its source (record id, row, PMID, DOI,
the title or the text's first sentence, authors, year, journal; the abstract in JSON Lines and
RIS) and, per label and stage, every reviewer's value with the date, exclusion reason and note,
and the final value with where it came from (agreed, resolved, or the stopping rule, whose
justification - test, N, n, k, r, p-value, target, confidence, time, user - goes with it).

What each person sees of the decisions is their `Sight` (screening.visibility, decided by
projects.policy): while a session is blind a reviewer's export holds only their own decisions
and a viewer's only the final ones.
"""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from dataset_management.export import csv_safe_cell
from screening import rescreen, selectors
from screening.models import Decision, Prior, Record, Resolution, ScreeningSession, Stage
from screening.prisma import prisma_counts
from screening.visibility import (
    Sight,
    agreement_shown,
    prisma_shown,
    record_identity,
    stop_justification_shown,
)

CSV_COLUMNS = ["record", "record_id", "id", "pmid", "doi", "title", "authors", "year",
               "journal", "stage", "label", "reviewer", "value", "exclusion_reason",
               "decided_at", "note", "final", "final_source", "final_exclusion_reason"]

__all__ = ["export_csv", "export_jsonl", "export_ris", "prisma_counts", "prisma_for",
           "record_lines"]


CHUNK = 2000


def _records(session: ScreeningSession) -> Iterator[tuple[Record, tuple[list, list]]]:
    """Each record with its decisions and resolutions, CHUNK records at a time: two queries a
    chunk, grouped here (prefetch_related builds a queryset per record: most of the time on
    20,000 records). The ranker's scores and a labelled dataset's truth are never exported."""
    records = session.records.order_by("position").defer("scores", "truth")
    chunk: list[Record] = []
    for record in records.iterator(CHUNK):
        chunk.append(record)
        if len(chunk) == CHUNK:
            yield from _with_rows(chunk)
            chunk = []
    yield from _with_rows(chunk)


def _with_rows(chunk: list[Record]) -> Iterator[tuple[Record, tuple[list, list]]]:
    ids = [record.pk for record in chunk]
    decisions: dict[int, list] = defaultdict(list)
    resolutions: dict[int, list] = defaultdict(list)
    for d in Decision.objects.filter(record_id__in=ids).select_related("reviewer").order_by("pk"):
        decisions[d.record_id].append(d)
    for r in Resolution.objects.filter(record_id__in=ids).select_related("resolver"):
        resolutions[r.record_id].append(r)
    known: dict[int, dict[str, str]] = defaultdict(dict)
    for p in Prior.objects.filter(record_id__in=ids).select_related("set_by"):
        known[p.record_id][p.label] = f"prior knowledge (by {p.set_by.get_username()}, {p.how})"
    for record in chunk:
        record.priors_shown = known[record.pk]  # type: ignore[attr-defined]
        yield record, (decisions[record.pk], resolutions[record.pk])


def _source(record: Record, label: str, stage: str, said: list[Any], resolution: Any) -> str:
    if resolution is not None:
        return "resolved"
    if stage == Stage.FULL_TEXT:
        return "reviewers" if label in record.fulltext_final else ""
    if label in getattr(record, "priors_shown", {}):
        return record.priors_shown[label]  # type: ignore[attr-defined]
    if record.done_phase == "stop" and not said:
        return "stopping rule"
    return "reviewers" if label in record.final else ""


def _final_reason(record: Record, label: str, stage: str, said: list[Any],
                  resolution: Any, final: str) -> str:
    if final != "no":
        return ""
    if stage == Stage.FULL_TEXT and record.fulltext_reasons.get(label):
        return record.fulltext_reasons[label]
    if resolution is not None:
        return resolution.exclusion_reason
    # Agreed: the reviewers' reasons (two may name different ones), in a stable order.
    return "; ".join(sorted({d.exclusion_reason for d in said if d.exclusion_reason}))


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


def _label_entry(session: ScreeningSession, record: Record, label: str, stage: str,
                 sight: Sight, rows: tuple[list[Any], list[Any]]) -> dict[str, Any] | None:
    """One label at one stage as this person may see it; None when they see nothing of it at
    full text (a record that never reached it, or only another reviewer's decision). `rows`:
    the record's decisions and resolutions, read once (a queryset per call cost seconds)."""
    said = [d for d in rows[0] if d.label == label and d.stage == stage]
    resolution = next((r for r in rows[1] if r.label == label and r.stage == stage), None)
    finals = record.final if stage == Stage.TITLE_ABSTRACT else record.fulltext_final
    shown = [d for d in said if sight.decision_shown(d)]
    final = finals.get(label, "") if sight.finals_shown else ""
    if stage == Stage.FULL_TEXT and not shown and not final:
        return None
    source = _source(record, label, stage, said, resolution) if sight.finals_shown else ""
    entry: dict[str, Any] = {
        "stage": stage, "final": final, "source": source,
        "exclusion_reason": _final_reason(record, label, stage, said, resolution, final),
        "decisions": [{"reviewer": d.reviewer.get_username(), "value": d.value,
                       "exclusion_reason": d.exclusion_reason,
                       "decided_at": d.decided_at.isoformat(), "note": d.note} for d in shown],
        "resolution": ({"resolver": resolution.resolver.get_username(),
                        "value": resolution.value,
                        "exclusion_reason": resolution.exclusion_reason,
                        "note": resolution.note if sight.notes_shown else "",
                        # Why it was resolved although full-text work is left behind.
                        "discard_reason": resolution.discard_reason,
                        "resolved_at": resolution.resolved_at.isoformat()}
                       if resolution is not None and sight.finals_shown else None),
    }
    if source == "stopping rule":
        entry["note"] = _stop_note(session, label)
    return entry


def record_lines(session: ScreeningSession, *, sight: Sight) -> Iterator[dict[str, Any]]:
    """One dict per record: where it comes from, and per label its decisions at title and
    abstract (`labels`) and at full text (`fulltext`, only labels that reached it), as `sight`
    lets this person see them; `superseded`, the decisions a re-screen took off it."""
    superseded = rescreen.superseded_shown(session=session, sight=sight)
    for record, rows in _records(session):
        labels = {label: _label_entry(session, record, label, Stage.TITLE_ABSTRACT, sight, rows)
                  for label in session.labels}
        fulltext = {label: entry for label in session.labels if (entry := _label_entry(
            session, record, label, Stage.FULL_TEXT, sight, rows)) is not None}
        identity = record_identity(record=record)
        yield {"record": identity.pop("row"), **identity, "abstract": record.abstract,
               "labels": labels, "fulltext": fulltext,
               "superseded": superseded.get(record.pk, [])}


def prisma_for(session: ScreeningSession, *, sight: Sight) -> dict[str, Any]:
    """The PRISMA counts every door (page, SVG, PNG, JSON, the JSON Lines head) shows `sight`."""
    return prisma_shown(counts=prisma_counts(session), sight=sight)


def export_jsonl(session: ScreeningSession, *, sight: Sight) -> Iterator[str]:
    """The first line is the session's: its stop, agreement and PRISMA counts as `sight` may
    read them (a blind reviewer's hold nothing drawn from the other's answers)."""
    yield json.dumps({"session": session.name, "labels": session.labels,
                      "recall_target": session.recall_target, "confidence": session.confidence,
                      "stop_justification": stop_justification_shown(session=session,
                                                                     sight=sight),
                      "agreement": agreement_shown(
                          rows=selectors.agreement_table(session=session), sight=sight),
                      "prisma": prisma_for(session, sight=sight)}, ensure_ascii=False) + "\n"
    for line in record_lines(session, sight=sight):
        yield json.dumps(line, ensure_ascii=False) + "\n"


def _csv_rows(line: dict[str, Any]) -> Iterator[list[Any]]:
    head = [line["record"], line["record_id"], line["id"], line["pmid"], line["doi"],
            line["title"], "; ".join(line["authors"]), line["year"], line["journal"]]
    for stage_entries in (line["labels"], line["fulltext"]):
        for label, about in stage_entries.items():
            rows = about["decisions"] or [{
                "reviewer": about["source"], "value": about["final"], "decided_at": "",
                "exclusion_reason": about["exclusion_reason"], "note": about.get("note", "")}]
            for d in rows:
                yield [*head, about["stage"], label, d["reviewer"], d["value"],
                       d["exclusion_reason"], d["decided_at"], d["note"], about["final"],
                       about["source"], about["exclusion_reason"]]
    for d in line["superseded"]:
        yield [*head, d["stage"], d["label"], d["person"], d["value"], d["exclusion_reason"],
               d["decided_at"], d["note"], "", f"superseded by a re-screen on "
               f"{d['superseded_at']}: {d['superseded_reason']}", ""]


def export_csv(session: ScreeningSession, *, sight: Sight) -> Iterator[str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer)

    def flush() -> str:
        text = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        return text

    writer.writerow(CSV_COLUMNS)
    for line in record_lines(session, sight=sight):
        for row in _csv_rows(line):
            writer.writerow([csv_safe_cell(str(c)) for c in row])
        yield flush()


def _ris_decisions(label: str, about: dict[str, Any]) -> Iterator[str]:
    stage = " (full text)" if about["stage"] == Stage.FULL_TEXT else ""
    if about["final"]:
        verdict = "include" if about["final"] == "yes" else "exclude"
        reason = f" - {about['exclusion_reason']}" if about["exclusion_reason"] else ""
        yield f"KW  - {label}{stage}: {verdict}{reason}"
    for d in about["decisions"]:
        reason = f" ({d['exclusion_reason']})" if d["exclusion_reason"] else ""
        yield (f"N1  - {label}{stage}: {d['reviewer']} said {d['value']}{reason} on "
               f"{d['decided_at']}{' - ' + d['note'] if d['note'] else ''}")
    if about.get("note"):
        yield f"N1  - {label}{stage}: {about['note']}"


def export_ris(session: ScreeningSession, *, sight: Sight) -> Iterator[str]:
    """RIS that Zotero and EndNote read back: TI is the title or the first sentence, never
    empty; AN carries the PMID, DO the DOI, UR the source link, ID MedLitBot's record id."""
    for line in record_lines(session, sight=sight):
        out = ["TY  - JOUR", f"TI  - {line['title']}"]
        out += [f"AU  - {author}" for author in line["authors"]]
        out += [f"{tag}  - {line[key]}" for tag, key in (
            ("PY", "year"), ("JO", "journal"), ("DO", "doi"), ("AN", "pmid"),
            ("UR", "source_url")) if line[key]]
        out += [f"AB  - {line['abstract']}", f"ID  - {line['record_id']}",
                f"N1  - record {line['record']} of the collection"
                f"{'; its id ' + line['id'] if line['id'] else ''}"]
        for stage_entries in (line["labels"], line["fulltext"]):
            for label, about in stage_entries.items():
                out.extend(_ris_decisions(label, about))
        yield "\n".join(o.replace("\r", " ").replace("\n", " ") for o in out) + "\nER  - \n\n"
