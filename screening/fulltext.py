"""The full-text stage (PRISMA 2020 item 16): a record included (or unsure from every reviewer)
at title/abstract moves, per label, to full text. A reviewer attaches its report as a PDF,
whose text is extracted within bounds (screening/fulltext_pdf.py) and kept; or marks it not
retrieved with a reason; then decides yes or no per label, a "no" always with one of the
session's exclusion reasons. Dual review applies as at title/abstract: with two reviewers per
record a label is final when both agree or a maintainer resolves it.
"""

from __future__ import annotations

import uuid
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from core import filestore
from projects import policy
from projects.services import activity_record
from screening import fulltext_selectors, record_state, resolutions
from screening.errors import ScreeningConflict, ScreeningError, note_checked
from screening.fulltext_pdf import MB, PdfRefused, pdf_text
from screening.models import Decision, FullTextReport, Record, Resolution, ScreeningSession, Stage
from screening.services import exclusion_reasons_check

FT_VALUES = ("yes", "no")


def _at_fulltext(*, user: Any, record: Record, action: str = policy.Action.SCREEN
                 ) -> list[str]:
    session = record.session
    policy.require(user=user, action=action, obj=session)
    labels = fulltext_selectors.fulltext_labels(record=record, session=session)
    if not labels:
        raise ScreeningError("This record has not reached the full-text stage: it is not "
                             "included (or unsure) at title/abstract.")
    return labels


def fulltext_report_attach(*, user: Any, record: Record, uploaded_file: Any) -> FullTextReport:
    """Keep the report's PDF and its extracted text; ScreeningError (nothing kept) for a file
    that is too large, broken, encrypted or hostile (fulltext_pdf's bounds)."""
    _at_fulltext(user=user, record=record)
    limit = settings.FULLTEXT_MAX_PDF_MB * MB
    if (uploaded_file.size or 0) > limit:
        raise ScreeningError(f"This PDF is {uploaded_file.size / MB:.1f} MB, over the limit of "
                             f"{settings.FULLTEXT_MAX_PDF_MB} MB (FULLTEXT_MAX_PDF_MB). "
                             "Nothing was kept.")
    data = uploaded_file.read(limit + 1)
    try:
        extracted = pdf_text(data)
    except PdfRefused as exc:
        raise ScreeningError(str(exc)) from None
    name = f"screening/fulltext/{record.session_id}/{record.pk}-{uuid.uuid4().hex[:12]}.pdf"
    path = Path(settings.MEDIA_ROOT) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    try:
        with transaction.atomic():
            locked = Record.objects.select_for_update().get(pk=record.pk)
            report = FullTextReport.objects.select_for_update().get_or_create(record=record)[0]
            old = report.pdf_path
            report.status, report.not_retrieved_reason = FullTextReport.Status.RETRIEVED, ""
            report.pdf_path, report.text, report.text_chars = name, extracted.text, len(
                extracted.text)
            report.pages, report.uploaded_by, report.uploaded_at = (
                extracted.pages, user, timezone.now())
            report.save()
            record_state.record_state_sync(record=locked, session=record.session)
            activity_record(project=record.session.project_id, actor=user,
                            verb="screening_fulltext", subject=record.session,
                            summary=f"{user.get_username()} attached the full text of record "
                            f"{record.position + 1} ({extracted.pages} pages)")
    except Exception:
        path.unlink(missing_ok=True)
        raise
    filestore.file_publish(name=name)
    if old and old != name:
        transaction.on_commit(lambda: _file_forget(old))
    return report


def _file_forget(name: str) -> None:
    """A replaced report's PDF: this node's copy and the shared one."""
    (Path(settings.MEDIA_ROOT) / name).unlink(missing_ok=True)
    filestore.file_delete(name=name)


def fulltext_not_retrieved(*, user: Any, record: Record, reason: str) -> FullTextReport:
    """The report was sought and could not be had: PRISMA's "reports not retrieved"."""
    _at_fulltext(user=user, record=record)
    reason = " ".join(str(reason or "").split())[:500]
    if not reason:
        raise ScreeningError("Say why the report could not be retrieved.")
    with transaction.atomic():
        locked = Record.objects.select_for_update().get(pk=record.pk)
        report = FullTextReport.objects.select_for_update().get_or_create(record=record)[0]
        report.status, report.not_retrieved_reason = FullTextReport.Status.NOT_RETRIEVED, reason
        report.save(update_fields=["status", "not_retrieved_reason"])
        # Refused (rolled back) once the report was assessed: it was retrieved.
        record_state.record_state_sync(record=locked, session=record.session)
        activity_record(project=record.session.project_id, actor=user,
                        verb="screening_fulltext", subject=record.session,
                        summary=f"{user.get_username()} marked the full text of record "
                        f"{record.position + 1} not retrieved: {reason}")
    return report


def fulltext_decision_record(*, user: Any, record: Record, values: dict[str, str],
                             reasons: dict[str, str] | None = None, note: str = "") -> Record:
    """One reviewer's yes/no per label at full text; a "no" needs one of the session's
    exclusion reasons. Idempotent (one row per record, reviewer, label and stage), and refused
    (ScreeningConflict) on a report not retrieved yet or marked not retrieved (it cannot be
    assessed), and on a label already resolved."""
    labels = _at_fulltext(user=user, record=record)
    session = record.session
    if not values or set(values) - set(labels) or set(values.values()) - set(FT_VALUES):
        raise ScreeningError(f"Decide yes or no at full text for {', '.join(labels)}.")
    reasons = exclusion_reasons_check(session=session, values=values, reasons=reasons or {},
                                      required=True)
    with transaction.atomic():
        record = Record.objects.select_for_update().get(pk=record.pk)
        report_retrieved_check(record=record)
        resolved = set(Resolution.objects.filter(record=record, stage=Stage.FULL_TEXT)
                       .values_list("label", flat=True))
        if resolved & set(values):
            raise ScreeningConflict("A maintainer has resolved this report at full text; your "
                                 "decision on it can no longer change.")
        others = (Decision.objects.filter(record=record, stage=Stage.FULL_TEXT)
                  .exclude(reviewer=user).values("reviewer").distinct().count())
        mine = Decision.objects.filter(record=record, stage=Stage.FULL_TEXT, reviewer=user)
        if not mine.exists() and others >= session.reviewers_per_record:
            raise ScreeningError("This report already has its reviewers at full text.")
        for label, value in values.items():
            _upsert(record=record, user=user, label=label, value=value, note=note,
                    reason=reasons.get(label, ""))
        fulltext_finalise(record=record, session=session, labels=labels)
    return record


def report_retrieved_check(*, record: Record) -> None:
    """A report is assessed only once retrieved: ScreeningConflict (409) saying what to do."""
    report = FullTextReport.objects.filter(record=record).first()
    status = report.status if report is not None else FullTextReport.Status.SOUGHT
    if status == FullTextReport.Status.NOT_RETRIEVED:
        raise ScreeningConflict("This report was marked not retrieved: attach its PDF before "
                                "deciding on it.", facts={"status": status})
    if status != FullTextReport.Status.RETRIEVED:
        raise ScreeningConflict("This report has not been retrieved yet: attach its PDF, or "
                                "mark it not retrieved, before deciding on it.",
                                facts={"status": status})


def _upsert(*, record: Record, user: Any, label: str, value: str, note: str,
            reason: str) -> None:
    fields = {"value": value, "note": note_checked(note), "exclusion_reason": reason}
    try:
        with transaction.atomic():  # a savepoint: the IntegrityError leaves the outer one usable
            Decision.objects.create(record=record, reviewer=user, label=label,
                                    stage=Stage.FULL_TEXT, **fields)
    except IntegrityError:
        Decision.objects.filter(record=record, reviewer=user, label=label,
                                stage=Stage.FULL_TEXT).update(decided_at=timezone.now(),
                                                              **fields)


def fulltext_finalise(*, record: Record, session: ScreeningSession, labels: list[str]) -> None:
    """Recompute the record's full-text final value and exclusion reason per label: resolved,
    or agreed by its N reviewers (the reason the reviewers gave most, the first on a tie)."""
    resolved = {r.label: r for r in Resolution.objects.filter(record=record,
                                                              stage=Stage.FULL_TEXT)}
    said: dict[str, list[Decision]] = defaultdict(list)
    for decision in (Decision.objects.filter(record=record, stage=Stage.FULL_TEXT)
                     .order_by("reviewer_id")):
        said[decision.label].append(decision)
    final, reasons = {}, {}
    for label in labels:
        decisions = said.get(label, [])
        if label in resolved:
            final[label], reason = resolved[label].value, resolved[label].exclusion_reason
        elif (len(decisions) >= session.reviewers_per_record
              and len({d.value for d in decisions}) == 1):
            final[label] = decisions[0].value
            counted = Counter(d.exclusion_reason for d in decisions if d.exclusion_reason)
            reason = counted.most_common(1)[0][0] if counted else ""
        else:
            continue
        if final[label] == "no":
            reasons[label] = reason
    record.fulltext_final, record.fulltext_reasons = final, reasons
    record.save(update_fields=["fulltext_final", "fulltext_reasons"])
    record_state.record_state_sync(record=record, session=session)


def fulltext_resolve(*, user: Any, record: Record, label: str, value: str, reason: str = "",
                     note: str = "", replaces: str = "") -> Record:
    """A maintainer's final word at full text where the two reviewers disagree, on a retrieved
    report; a second one of the label needs `replaces` (resolutions.resolution_save)."""
    labels = _at_fulltext(user=user, record=record, action=policy.Action.RESOLVE_CONFLICTS)
    session = record.session
    if label not in labels or value not in FT_VALUES:
        raise ScreeningError("Resolve a label of this report with yes or no.")
    reason = exclusion_reasons_check(session=session, values={label: value},
                                     reasons={label: reason}, required=True).get(label, "")
    with transaction.atomic():
        record = Record.objects.select_for_update().get(pk=record.pk)
        report_retrieved_check(record=record)
        replaced = resolutions.resolution_save(
            record=record, user=user, label=label, stage=Stage.FULL_TEXT, value=value,
            note=note, exclusion_reason=reason, replaces=replaces)
        fulltext_finalise(record=record, session=session, labels=labels)
        said = (f"changed the resolution of {label} at full text from {replaced.value} to "
                f"{value}" if replaced is not None else f"resolved {label}={value} at full text")
        activity_record(project=session.project_id, actor=user, verb="screening_resolve",
                        subject=session, summary=f"{user.get_username()} {said} for record "
                        f"{record.position + 1}", replaced=getattr(replaced, "pk", None))
    return record
