"""Screening reads: sessions, the next record for a reviewer, conflicts, agreement, stopping."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection
from typing import Any

from django.db.models import Exists, OuterRef, QuerySet
from django.utils import timezone

from classification.batches import selectors as batch_selectors
from classification.models import BatchJob
from projects import policy
from screening import (
    agreement,
    highlight,
    identity,
    ranking,
    stopping,
    stopping_cs,
    stopping_cs_state,
    stopping_forecast,
    stopping_panel,
)
from screening.models import (
    Decision,
    Prior,
    Record,
    Resolution,
    ScreeningSession,
    SimulationRun,
    Skip,
    Stage,
)


def session_list(*, user: Any, project: Any = None) -> QuerySet[ScreeningSession]:
    return policy.scope(ScreeningSession.objects.all(), user=user, project=project)


def collection_batches(*, user: Any, project: Any = None) -> QuerySet[BatchJob]:
    """The finished batches a session may screen: completed ones in the user's projects."""
    return batch_selectors.batch_job_list(user=user, project=project).filter(
        status=BatchJob.Status.COMPLETED)


def session_get(*, user: Any, pk: Any, action: str = policy.Action.VIEW) -> ScreeningSession:
    return policy.object_get(ScreeningSession, user=user, action=action, pk=pk)


def record_get(*, user: Any, session: ScreeningSession, pk: Any,
               action: str = policy.Action.VIEW) -> Record:
    return policy.object_get(Record.objects.filter(session=session), user=user, action=action,
                             pk=pk)


def decisions_kept_count(*, user: Any, session_id: Any) -> int:
    """How many of their own decisions a person has in the session (they may have left it)."""
    if not getattr(user, "is_authenticated", False):
        return 0
    return Decision.objects.filter(record__session_id=session_id, reviewer=user).count()


def record_final_values(*, record: Record, session: ScreeningSession) -> dict[str, str]:
    """The label -> yes/no the record finally has: resolved, known before screening (a prior,
    screening.priors), agreed by N reviewers, or none."""
    resolved = {**dict(Prior.objects.filter(record=record).values_list("label", "value")),
                **dict(Resolution.objects.filter(record=record, stage=Stage.TITLE_ABSTRACT)
                       .values_list("label", "value"))}
    said: dict[str, list[str]] = defaultdict(list)
    for label, value in Decision.objects.filter(
            record=record, stage=Stage.TITLE_ABSTRACT).values_list("label", "value"):
        said[label].append(value)
    final = {}
    for label in session.labels:
        values = said.get(label, [])
        if label in resolved:
            final[label] = resolved[label]
        elif (len(values) >= session.reviewers_per_record and len(set(values)) == 1
              and values[0] in ("yes", "no")):
            final[label] = values[0]
    return final


def record_next(*, user: Any, session: ScreeningSession,
                exclude: Collection[int] = ()) -> Record | None:
    """The next record this reviewer should read, from the stored ranking only.

    Skips records they decided and records that have their N reviewers; in the sampling phase
    the random order. Records they skipped come back once the others are used up, and records
    they called unsure once nothing else is left. `exclude`
    holds the record on screen and those whose answers are still on their way: the page
    prefetches the one after them, and must never be handed back one it has just answered.
    """
    mine = Decision.objects.filter(record=OuterRef("pk"), reviewer=user,
                                   stage=Stage.TITLE_ABSTRACT)
    undone = Record.objects.filter(session=session, done=False)
    if exclude:
        undone = undone.exclude(pk__in=list(exclude))
    order = (("sample_order",) if session.phase == ScreeningSession.Phase.SAMPLING
             else ("-priority", "position"))
    open_ = undone.filter(reviewer_count__lt=session.reviewers_per_record).exclude(Exists(mine))
    skipped = Skip.objects.filter(record=OuterRef("pk"), reviewer=user)
    fresh = open_.exclude(Exists(skipped)).order_by(*order).first()
    if fresh is not None:
        return fresh
    # Then what they set aside (screening.skip), the earliest first.
    later = open_.filter(skips__reviewer=user).order_by("skips__skipped_at", "pk").first()
    if later is not None:
        return later
    return undone.filter(Exists(mine.filter(value="unsure"))).order_by(*order).first()


def record_payload(*, record: Record, user: Any) -> dict[str, Any]:
    """What a reviewer sees: the text and their own decisions, never another reviewer's.

    The title and abstract come also as highlight segments of the session's include and
    exclude terms; `title_shown` is the title or first sentence a list names it by, `citation`
    its authors, year, journal and keywords; `locked` names the labels a maintainer has
    resolved (no longer changeable).
    """
    session = record.session
    own = list(record.decisions.filter(reviewer=user, stage=Stage.TITLE_ABSTRACT)
               .values_list("label", "value", "exclusion_reason", "note"))
    terms = {"include": session.include_terms or [], "exclude": session.exclude_terms or []}
    return {"id": record.pk, "position": record.position + 1, "ext_id": record.ext_id,
            "title": record.title, "abstract": record.abstract,
            "title_shown": identity.record_title_shown(record=record),
            "citation": identity.record_citation(record=record),
            "title_marks": highlight.highlight_segments(text=record.title, **terms),
            "abstract_marks": highlight.highlight_segments(text=record.abstract, **terms),
            "mine": {label: value for label, value, _, _ in own},
            "reasons": {label: reason for label, _, reason, _ in own if reason},
            "note": next((note for *_, note in own if note), ""),
            "locked": sorted(Resolution.objects.filter(
                record=record, stage=Stage.TITLE_ABSTRACT).values_list("label", flat=True))}


def conflicts_list(*, session: ScreeningSession) -> list[dict[str, Any]]:
    """Labels on which the reviewers of a record disagree and nobody has resolved yet."""
    if session.reviewers_per_record < 2:
        return []
    records = (Record.objects.filter(session=session, done=False,
                                     reviewer_count__gte=session.reviewers_per_record)
               .prefetch_related("decisions__reviewer", "resolutions").order_by("position"))
    out = []
    for record in records:
        resolved = {r.label for r in record.resolutions.all()}
        by_label: dict[str, list[Decision]] = defaultdict(list)
        for decision in record.decisions.all():
            by_label[decision.label].append(decision)
        for label in session.labels:
            said = by_label.get(label, [])
            if (label not in resolved and len(said) >= 2
                    and len({d.value for d in said}) > 1):
                out.append({"record": record, "label": label, "decisions": sorted(
                    said, key=lambda d: d.reviewer_id)})
    return out


def fulltext_conflicts(*, session: ScreeningSession) -> list[dict[str, Any]]:
    """Labels on which a report's reviewers disagree at full text, unresolved, in the records'
    order (after the title/abstract ones: a record reaches full text only once those are
    settled)."""
    if session.reviewers_per_record < 2:
        return []
    resolved = set(Resolution.objects.filter(record__session=session, stage=Stage.FULL_TEXT)
                   .values_list("record_id", "label"))
    said: dict[tuple[int, str], list[Decision]] = defaultdict(list)
    for decision in (Decision.objects.filter(record__session=session, stage=Stage.FULL_TEXT)
                     .select_related("reviewer", "record")
                     .order_by("record__position", "label", "reviewer_id")):
        said[(decision.record_id, decision.label)].append(decision)
    return [{"record": found[0].record, "label": label, "decisions": found,
             "stage": Stage.FULL_TEXT}
            for (record_id, label), found in said.items()
            if (record_id, label) not in resolved and len(found) >= 2
            and len({d.value for d in found}) > 1]


def agreement_table(*, session: ScreeningSession) -> list[dict[str, Any]]:
    """Per label: percent agreement and Cohen's kappa with its 95% CI, over doubly read records."""
    said: dict[tuple[int, str], list[tuple[int, str]]] = defaultdict(list)
    for record_id, label, reviewer, value in (
            # Title/abstract only: a full-text pair is a second, different judgement.
            Decision.objects.filter(record__session=session, stage=Stage.TITLE_ABSTRACT)
            .values_list("record_id", "label", "reviewer_id", "value")):
        said[(record_id, label)].append((reviewer, value))
    table = []
    for label in session.labels:
        pairs = [(a[1], b[1]) for (rec, la), values in said.items() if la == label
                 and len(values) >= 2 for a, b in [sorted(values)[:2]]]
        row = agreement.agreement(pairs=pairs)
        table.append({"label": label, **row, "kappa_display": agreement.kappa_display(row)})
    return table


def stopping_table(*, session: ScreeningSession) -> list[dict[str, Any]]:
    """Per label, the session's stopping rule as it stands (screening.stopping, or for
    `confseq` screening.stopping_cs_state).

    The sample is the longest prefix of the random order whose records all have a final value
    for the label: a record skipped as unsure must be settled before the sample grows past it,
    or the hard records would be left out of a sample that must be random.
    """
    rows = list(Record.objects.filter(session=session).values_list(
        "final", "sample_order", "done_phase").order_by("sample_order"))
    states = []
    for label in session.labels:
        r_al = sum(1 for final, order, phase in rows
                   if order is None and final.get(label) == "yes")
        draws = (stopping_forecast.sample_draws(rows=rows, label=label)
                 if session.sampling_started_at is not None else [])
        pool = session.sampling_pool if session.sampling_started_at else sum(
            1 for final, order, phase in rows if label not in final)
        if session.stopping_rule == "confseq":
            states.append(stopping_cs_state.confseq_state(
                label=label, pool=pool, draws=draws, r_al=r_al,
                ranked_recent=_ranked_decisions(session=session, label=label),
                recall_target=session.recall_target, confidence=session.confidence))
            continue
        states.append(stopping.stop_state(
            label=label, pool=pool, sampled=len(draws), k=sum(draws), r_al=r_al,
            recall_target=session.recall_target, confidence=session.confidence,
            spent=session.stopping_rule == "callaghan_spent").as_dict())
    return states


def _ranked_decisions(*, session: ScreeningSession, label: str) -> list[int]:
    """The ranked phase's last decisions for a label, oldest first (1: relevant): what the
    confidence sequence's prior is set from, as in the simulation. Records read before the
    switch have no place in the random order."""
    finals = list(Record.objects.filter(session=session, done=True, sample_order__isnull=True)
                  .exclude(done_phase__in=("stop", "prior")).order_by("-done_at", "-pk")
                  .values_list("final", flat=True)[:stopping_cs.RECENT])
    return [int(final.get(label) == "yes") for final in reversed(finals)]


def session_summary_for_page(*, session: ScreeningSession) -> dict[str, Any]:
    """The summary the session page polls: kappa rounded as the page shows it (the API and the
    export keep every digit)."""
    summary = session_summary(session=session)
    summary["agreement"] = [agreement.agreement_for_page(row) for row in summary["agreement"]]
    return summary


def session_summary(*, session: ScreeningSession) -> dict[str, Any]:
    """Everything the session page and the API's detail show, polled as decisions come in."""
    session.refresh_from_db()
    total = session.records.count()
    # Records settled by prior knowledge alone: done, never screened (screening.priors).
    priors = session.records.filter(done=True, done_phase="prior").count()
    return {
        "id": session.pk, "name": session.name, "phase": session.phase,
        "labels": session.labels, "records": total, "done": session.final_count,
        "priors": priors, "remaining": total - session.final_count - priors,
        "reviewers_per_record": session.reviewers_per_record,
        "ranking_refreshed_at": (session.ranking_refreshed_at.isoformat()
                                 if session.ranking_refreshed_at else None),
        "collection": {"source": session.source, "name": session.collection_name,
                       "dataset": session.dataset_id,
                       "batch": session.batch_id.hex if session.batch_id else None},
        "ranker_running": ranking.ranker_running(session=session),
        # The state text, the ranker in use per label and its figures, the vectors' progress.
        "ranking": ranking.ranking_state(session=session, records=total),
        # The starting model's scores are on their way (a job on the inference worker).
        "starting_scoring": session.starting_pending,
        "ranker_error": session.ranker_error,
        "agreement": agreement_table(session=session),
        "stopping": (states := stopping_table(session=session)),
        "stopping_panel": stopping_panel.stopping_panel(session=session, states=states),
        "conflicts": (len(conflicts_list(session=session))
                      + len(fulltext_conflicts(session=session))),
        "stop_justification": session.stop_justification or None,
    }


def simulation_run_list(*, user: Any, project: Any = None) -> QuerySet[SimulationRun]:
    """Simulations in the user's projects, without their (large) results."""
    return policy.scope(SimulationRun.objects.select_related("dataset"), user=user,
                        project=project).defer("result", "dataset__report")


def simulation_run_get(*, user: Any, pk: Any) -> SimulationRun:
    return policy.object_get(SimulationRun.objects.select_related("dataset"), user=user, pk=pk)


def screen_progress(*, user: Any, session: ScreeningSession) -> dict[str, int]:
    """The screen page's counts: the reviewer's records decided today (local date) and in all,
    the session's records done and remaining (a blind reviewer reads them through
    visibility.progress_for, which counts their own records instead)."""
    mine = Decision.objects.filter(record__session=session, reviewer=user,
                                   stage=Stage.TITLE_ABSTRACT)
    today = timezone.localdate()
    total = session.records.count()
    done = ScreeningSession.objects.filter(pk=session.pk).values_list(
        "final_count", flat=True).first() or 0
    total -= session.records.filter(done=True, done_phase="prior").count()
    return {"mine_today": mine.filter(decided_at__date=today).values("record").distinct()
            .count(),
            "mine": mine.values("record").distinct().count(),
            "done": done, "remaining": total - done, "records": total}


def decisions_recent(*, user: Any, session: ScreeningSession,
                     limit: int = 10) -> list[dict[str, Any]]:
    """The records this reviewer decided last, newest first, as the screen page shows them:
    what undo brings back after a reload."""
    ids: list[int] = []
    # A record holds at most one of their decisions per label: this slice covers `limit`.
    for record_id in (Decision.objects.filter(record__session=session, reviewer=user,
                                              stage=Stage.TITLE_ABSTRACT)
                      .order_by("-decided_at", "-pk")
                      .values_list("record_id", flat=True)[:limit * len(session.labels)]):
        if record_id not in ids and len(ids) < limit:
            ids.append(record_id)
    records = Record.objects.select_related("session").in_bulk(ids)
    return [record_payload(record=records[pk], user=user) for pk in ids if pk in records]
