"""Screening writes: sessions, decisions, resolutions, the switch to sampling and the stop.

Every write asks projects.policy first (screening needs the reviewer role, resolving and
managing the maintainer's) and records its line in the project's activity log.
"""

from __future__ import annotations

import random
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from projects import policy
from projects.services import activity_record
from screening import (
    fulltext_selectors,
    ranking,
    record_state,
    resolutions,
    selectors,
    sources,
    stopping_rules,
    vector_fill,
)
from screening.errors import ScreeningConflict, ScreeningError, note_checked
from screening.models import (
    VALUES,
    Decision,
    Record,
    Resolution,
    ScreeningSession,
    Stage,
    StoppingRule,
)

INSERT_CHUNK = 1000


# --- sessions ------------------------------------------------------------------------------


def session_create(*, user: Any, name: str, labels: list[str], dataset: Any = None,
                   batch: Any = None, starting_model: Any = None, order: str = "most_likely",
                   reviewers_per_record: int = 1, ranker_every: int = 10,
                   recall_target: float = 0.95, confidence: float = 0.95,
                   stopping_rule: str = "") -> ScreeningSession:
    """A session over one collection's records (a dataset or a finished batch), in its project.

    `stopping_rule`: one of models.StoppingRule (empty: the default the simulations chose).

    A label the starting model does not know is refused here (a model cannot rank a label it
    never learned; start without a model to screen it cold). A collection with no text is
    refused before anything is written; the records are written in one transaction. The
    starting model's scores are not computed here: the first ranker refresh, sent on commit to
    the inference worker, stores them, and until then the records come in a random order.
    """
    if (dataset is None) == (batch is None):
        raise ScreeningError("Choose one collection to screen: a dataset or a finished batch.")
    source = dataset if dataset is not None else batch
    policy.require(user=user, action=policy.Action.MANAGE_SCREENING, obj=source)
    labels = [label.strip() for label in labels if label.strip()]
    _check_options(labels=labels, order=order, reviewers_per_record=reviewers_per_record,
                   recall_target=recall_target, confidence=confidence, every=ranker_every)
    if starting_model is not None:
        _check_starting_model(user=user, model=starting_model, labels=labels)
    stopping_rule = stopping_rule or stopping_rules.DEFAULT_RULE
    if stopping_rule not in StoppingRule.values:
        raise ScreeningError(f"Choose a stopping rule: {', '.join(StoppingRule.values)}.")
    found = (sources.collection_of_dataset(dataset=dataset) if dataset is not None
             else sources.collection_of_batch(batch=batch))
    with transaction.atomic():
        session = ScreeningSession.objects.create(
            project_id=found.project_id, name=name[:200] or found.name[:200],
            source=found.source, dataset=dataset, batch=batch, source_name=found.name,
            source_facts=found.facts, labels=labels, starting_model=starting_model,
            order=order, reviewers_per_record=reviewers_per_record, ranker_every=ranker_every,
            recall_target=recall_target, confidence=confidence, created_by=user,
            starting_pending=starting_model is not None, stopping_rule=stopping_rule)
        _records_create(session, found.rows)
        activity_record(project=session.project_id, actor=user, verb="screening_create",
                        subject=session, summary=f"{user.get_username()} started screening "
                        f"“{session.name}” ({len(found.rows)} records, {', '.join(labels)})")
    if starting_model is not None:
        # After the commit, as a decision's refresh is asked: a broker that is down then is
        # noted on the session (ranker_error), not raised as a 503 for a session that exists.
        ranking.starting_scores_request(session_id=session.pk)
    vector_fill.vectors_fill_request(session_id=session.pk)  # the first ranking is by words
    return session


def _check_options(*, labels: list[str], order: str, reviewers_per_record: int,
                   recall_target: float, confidence: float, every: int) -> None:
    if not labels:
        raise ScreeningError("Name at least one label to screen for.")
    if order not in ScreeningSession.Order.values:
        raise ScreeningError("The order is most_likely or least_certain.")
    if reviewers_per_record not in (1, 2):
        raise ScreeningError("Each record is read by 1 or 2 reviewers.")
    if not (0 < recall_target < 1 and 0 < confidence < 1):
        raise ScreeningError("The recall target and the confidence lie between 0 and 1.")
    if every < 1:
        raise ScreeningError("The ranker retrains after at least 1 decision.")


def _check_starting_model(*, user: Any, model: Any, labels: list[str]) -> None:
    policy.require(user=user, action=policy.Action.VIEW, obj=model)
    unknown = [label for label in labels if label not in (model.label_names or [])]
    if unknown:
        raise ScreeningError(
            f"The starting model “{model.name}” does not know the label(s) "
            f"{', '.join(unknown)}: choose a model trained on them, or start without a "
            "model (a cold start from your first decisions).")
    if not model.is_trained:
        raise ScreeningError(f"The starting model “{model.name}” has not finished training: "
                             "choose a trained model, or start without one.")


def _records_create(session: ScreeningSession, rows: list[dict[str, Any]]) -> None:
    # A random order, reproducible per session, until the starting model's scores (a job) or
    # the ranker's first refit arrive.
    shuffle = random.Random(session.pk)
    chunk: list[Record] = []
    for position, row in enumerate(rows):
        chunk.append(Record(
            session=session, position=position, ext_id=row["ext_id"], title=row["title"],
            abstract=row["abstract"], truth=row["truth"], priority=shuffle.random(),
            identifiers=row.get("identifiers") or {}, citation=row.get("citation") or {}))
        if len(chunk) >= INSERT_CHUNK:
            Record.objects.bulk_create(chunk)
            chunk = []
    Record.objects.bulk_create(chunk)


# --- decisions -----------------------------------------------------------------------------


def decision_record(*, user: Any, record: Record, values: dict[str, str], note: str = "",
                    reasons: dict[str, str] | None = None) -> Record:
    """Keep one reviewer's yes/no/unsure per label for the record; the record, refreshed.

    Idempotent: a repeated submission updates the reviewer's own rows (unique record, reviewer,
    label, stage), and two reviewers deciding at once each keep theirs. The record's row is
    locked while its final values are recomputed, so neither decision is missed. `reasons`
    (label -> one of the session's exclusion reasons) is optional at this stage and kept on a
    "no" only. A reviewer may change their own decision (undo) until a maintainer resolves a
    conflict on it; resending the same value stays allowed, so a retried save never fails.
    """
    session = record.session
    _check_may_decide(user=user, session=session)
    unknown = sorted(set(values) - set(session.labels))
    bad = sorted(v for v in values.values() if v not in VALUES)
    if unknown or bad or not values:
        raise ScreeningError(f"Decide yes, no or unsure for the labels {', '.join(session.labels)}"
                             f"{' (unknown: ' + ', '.join(unknown) + ')' if unknown else ''}.")
    reasons = exclusion_reasons_check(session=session, values=values, reasons=reasons or {})
    with transaction.atomic():
        record = Record.objects.select_for_update().get(pk=record.pk)
        own = dict(record.decisions.filter(reviewer=user, stage=Stage.TITLE_ABSTRACT)
                   .values_list("label", "value"))
        if not own and record.reviewer_count >= session.reviewers_per_record:
            raise ScreeningError("This record already has its reviewers; take the next one.")
        _check_not_resolved(record=record, own=own, values=values)
        for label, value in values.items():
            _decision_upsert(record=record, user=user, label=label, value=value, note=note,
                             reason=reasons.get(label, ""))
        if not own:
            record.reviewer_count += 1
        record_finalise(record=record, session=session)
    ranking.ranker_refresh_request(session_id=session.pk)
    return record


def exclusion_reasons_check(*, session: ScreeningSession, values: dict[str, str],
                            reasons: dict[str, str], required: bool = False) -> dict[str, str]:
    """The reasons of the labels answered "no", each one of the session's list; with
    `required` (the full-text stage) every "no" must carry one."""
    kept = {label: str(reason) for label, reason in reasons.items()
            if values.get(label) == "no" and reason}
    wrong = sorted(r for r in kept.values() if r not in (session.exclusion_reasons or []))
    if wrong:
        raise ScreeningError(f"“{wrong[0]}” is not one of this session's exclusion reasons.")
    missing = sorted(label for label, value in values.items() if value == "no"
                     and label not in kept)
    if required and missing:
        raise ScreeningError(f"Choose an exclusion reason for {', '.join(missing)}: "
                             "at full text a report is excluded with its reason.")
    return kept


def _check_not_resolved(*, record: Record, own: dict[str, str], values: dict[str, str]) -> None:
    # A maintainer's resolution judged the two decisions as they stood: changing one afterwards
    # would silently re-open what was settled.
    changed = [label for label, value in values.items() if label in own and own[label] != value]
    if changed and Resolution.objects.filter(record=record, label__in=changed,
                                             stage=Stage.TITLE_ABSTRACT).exists():
        raise ScreeningError("A maintainer has resolved the conflict on this record; your "
                             "decision on it can no longer change.")


def _check_may_decide(*, user: Any, session: ScreeningSession) -> None:
    if session.phase == ScreeningSession.Phase.STOPPED:
        raise ScreeningError("This session has stopped; its records can no longer be decided.")
    if policy.role_of(user=user, project=session.project_id) is None:
        kept = selectors.decisions_kept_count(user=user, session_id=session.pk)
        if kept:
            raise ScreeningError(former_member_message(kept=kept))
    policy.require(user=user, action=policy.Action.SCREEN, obj=session)


def former_member_message(*, kept: int) -> str:
    """What a reviewer removed mid-session is told (the pages cannot see the session any more)."""
    return (f"You are no longer a member of this project: your {kept} decision(s) stay, "
            "attributed to you, but you can no longer decide.")


def _decision_upsert(*, record: Record, user: Any, label: str, value: str, note: str,
                     reason: str = "", stage: str = Stage.TITLE_ABSTRACT) -> None:
    note = note_checked(note)
    try:
        with transaction.atomic():  # a savepoint: the IntegrityError leaves the outer one usable
            Decision.objects.create(record=record, reviewer=user, label=label, value=value,
                                    note=note, exclusion_reason=reason, stage=stage)
    except IntegrityError:
        Decision.objects.filter(record=record, reviewer=user, label=label, stage=stage).update(
            value=value, note=note, exclusion_reason=reason, decided_at=timezone.now())


def record_finalise(*, record: Record, session: ScreeningSession,
                    discard_reason: str = "") -> None:
    """Recompute the record's final value per label; count it when it becomes done; move its
    state (record_state: refused if the move is not allowed, `discard_reason` confirming a
    move that leaves full-text work behind)."""
    final = selectors.record_final_values(record=record, session=session)
    done = all(label in final for label in session.labels)
    was_done = record.done
    record.final, record.done = final, done
    if done and not was_done:
        record.done_at = timezone.now()
        record.done_phase = ("sample" if record.sample_order is not None else "ranked")
    record.save(update_fields=["final", "done", "done_at", "done_phase", "reviewer_count"])
    if done != was_done:
        ScreeningSession.objects.filter(pk=session.pk).update(
            final_count=F("final_count") + (1 if done else -1))
    record_state.record_state_sync(record=record, session=session,
                                   discard_reason=discard_reason)


def conflict_resolve(*, user: Any, record: Record, label: str, value: str, note: str = "",
                     replaces: str = "", confirm_discard_fulltext: bool = False,
                     reason: str = "") -> Record:
    """A maintainer's (or the owner's) final word on a label at title/abstract.

    A second resolution of the label needs `replaces` (resolutions.resolution_save). One that
    takes the record, or the label, out of full text after work was done there is refused
    (ScreeningConflict) unless `confirm_discard_fulltext` with a `reason`: the work is kept,
    marked superseded, and the reason logged and kept on the resolution.
    """
    session = record.session
    policy.require(user=user, action=policy.Action.RESOLVE_CONFLICTS, obj=session)
    if label not in session.labels or value not in ("yes", "no"):
        raise ScreeningError("Resolve a label of this session with yes or no.")
    reason = " ".join(str(reason or "").split())[:500]
    if confirm_discard_fulltext and not reason:
        raise ScreeningError("Say why the full-text work is left behind: send a `reason`.")
    discard = reason if confirm_discard_fulltext else ""
    with transaction.atomic():
        record = Record.objects.select_for_update().get(pk=record.pk)
        before = fulltext_selectors.fulltext_labels(record=record, session=session)
        replaced = resolutions.resolution_save(
            record=record, user=user, label=label, stage=Stage.TITLE_ABSTRACT, value=value,
            note=note, discard_reason=discard, replaces=replaces)
        record_finalise(record=record, session=session, discard_reason=discard)
        _fulltext_labels_left(record=record, session=session, before=before, discard=discard)
        activity_record(project=session.project_id, actor=user, verb="screening_resolve",
                        subject=session, summary=_resolve_summary(
                            user=user, record=record, label=label, value=value,
                            replaced=replaced, discard=discard),
                        replaced=getattr(replaced, "pk", None), discard_reason=discard)
    ranking.ranker_refresh_request(session_id=session.pk)
    return record


def _fulltext_labels_left(*, record: Record, session: ScreeningSession, before: list[str],
                          discard: str) -> None:
    """A label that leaves full text while the record stays there: refused if it was decided
    at full text, unless confirmed; its full-text finals are no longer the record's."""
    after = fulltext_selectors.fulltext_labels(record=record, session=session)
    left = [label for label in before if label not in after]
    if not left:
        return
    decided = sorted(set(Decision.objects.filter(record=record, stage=Stage.FULL_TEXT,
                                                 label__in=left)
                         .values_list("label", flat=True)))
    if decided and not discard:
        raise ScreeningConflict(
            f"This record was decided at full text for {', '.join(decided)}: this resolution "
            "would take it out of the full-text stage. To resolve it anyway, confirm with "
            "confirm_discard_fulltext=true and a reason (the full-text work is kept, marked "
            "superseded).")
    record.fulltext_final = {k: v for k, v in record.fulltext_final.items() if k in after}
    record.fulltext_reasons = {k: v for k, v in record.fulltext_reasons.items() if k in after}
    record.save(update_fields=["fulltext_final", "fulltext_reasons"])


def _resolve_summary(*, user: Any, record: Record, label: str, value: str,
                     replaced: Resolution | None, discard: str) -> str:
    where = f"for record {record.position + 1} of “{record.session.name}”"
    said = (f"{user.get_username()} changed the resolution of {label} from {replaced.value} to "
            f"{value} {where} (replacing resolution {replaced.pk})" if replaced is not None
            else f"{user.get_username()} resolved {label}={value} {where}")
    return said + (f", leaving its full-text work behind: {discard}" if discard else "")


# --- phases, the stop, training --------------------------------------------------------------


def sampling_start(*, user: Any, session: ScreeningSession) -> ScreeningSession:
    """Switch from the ranked phase to drawing records uniformly at random.

    The records not yet done get a random permutation (sample_order): walking it is drawing
    without replacement, and its done prefix is the sample the stopping test reads. It changes
    the whole session's course (issue 35), so only maintainers and owners switch.
    """
    policy.require(user=user, action=policy.Action.MANAGE_SCREENING, obj=session)
    with transaction.atomic():
        locked = ScreeningSession.objects.select_for_update().get(pk=session.pk)
        if locked.phase != ScreeningSession.Phase.RANKED:
            return locked
        pool = list(locked.records.filter(done=False).values_list("pk", flat=True))
        random.SystemRandom().shuffle(pool)
        for start in range(0, len(pool), INSERT_CHUNK):
            Record.objects.bulk_update(
                [Record(pk=pk, sample_order=start + i)
                 for i, pk in enumerate(pool[start:start + INSERT_CHUNK])], ["sample_order"])
        locked.phase = ScreeningSession.Phase.SAMPLING
        locked.sampling_started_at = timezone.now()
        locked.sampling_pool = len(pool)
        locked.save(update_fields=["phase", "sampling_started_at", "sampling_pool"])
        activity_record(project=locked.project_id, actor=user, verb="screening_sampling",
                        subject=locked, summary=f"{user.get_username()} switched “{locked.name}"
                        f"” to random sampling ({len(pool)} records unscreened)")
    return locked


def session_stop(*, user: Any, session: ScreeningSession, force: bool = False
                 ) -> ScreeningSession:
    """Stop, marking every record not yet done as no, and keep the justification.

    Refused while a label's test has not rejected "recall < target" unless `force` (then the
    justification says so, with the p-values as they stood).
    """
    policy.require(user=user, action=policy.Action.MANAGE_SCREENING, obj=session)
    states = selectors.stopping_table(session=session)
    unmet = [s["label"] for s in states if not s["can_stop"]]
    if unmet and not force:
        raise ScreeningError(f"The stopping rule is not met yet for {', '.join(unmet)}: "
                             "read the random records the panel asks for, or stop anyway.")
    with transaction.atomic():
        locked = ScreeningSession.objects.select_for_update().get(pk=session.pk)
        if locked.phase == ScreeningSession.Phase.STOPPED:
            return locked
        now = timezone.now()
        marked = _stop_marks(session=locked, now=now)
        Record.objects.bulk_update(marked, ["final", "done", "done_phase", "done_at"],
                                   batch_size=INSERT_CHUNK)
        rest = [record for record in marked if record.done]
        record_state.session_states_sync(session=locked)
        locked.phase = ScreeningSession.Phase.STOPPED
        locked.stop_justification = {
            "labels": states, "forced": bool(unmet), "marked_no": len(rest),
            "stopped_at": now.isoformat(), "stopped_by": user.get_username()}
        locked.final_count = F("final_count") + len(rest)
        locked.save(update_fields=["phase", "stop_justification", "final_count"])
        activity_record(project=locked.project_id, actor=user, verb="screening_stop",
                        subject=locked, summary=f"{user.get_username()} stopped “{locked.name}"
                        f"”, marking {len(rest)} unread record(s) as no")
    locked.refresh_from_db()
    return locked


def _stop_marks(*, session: ScreeningSession, now: Any) -> list[Record]:
    """The records the stop marks no, as they will be: every label without a final value,
    except one at full text (unsure from every reviewer), whose report decides it; a record
    with such a label is not done."""
    at_fulltext = {record.pk: labels
                   for record, labels in fulltext_selectors.fulltext_records(session=session)}
    rest = []
    for record in session.records.filter(done=False):
        kept = at_fulltext.get(record.pk, ())
        record.final = {label: record.final.get(label, "no") for label in session.labels
                        if label in record.final or label not in kept}
        if len(record.final) == len(session.labels):
            record.done, record.done_phase, record.done_at = True, "stop", now
        rest.append(record)
    return rest


def session_blinding_end(*, user: Any, session: ScreeningSession) -> ScreeningSession:
    """The owner ends a session's blinding: from now on every member sees every decision.

    Logged, because what reviewers could see changes what their later decisions are worth
    (independence is why dual screening exists). Ending it twice changes nothing.
    """
    policy.require(user=user, action=policy.Action.END_BLINDING, obj=session)
    with transaction.atomic():
        ended = ScreeningSession.objects.filter(pk=session.pk, blind=True).update(blind=False)
        if ended:
            activity_record(project=session.project_id, actor=user, verb="screening_unblind",
                            subject=session, summary=f"{user.get_username()} ended blinding "
                            f"for “{session.name}”: every member now sees every decision")
    session.refresh_from_db()
    return session
