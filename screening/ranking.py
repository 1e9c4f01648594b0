"""Continuous active learning: refresh the stored ranking in the background.

A decision that makes records final may ask for a refresh (every ``ranker_every`` of them);
the ask takes the session's lock with a conditional UPDATE (only one refresh at a time) and sends
``screening.tasks.ranker_refresh`` by name once the transaction commits, routed to the inference
queue. The next-record query reads the stored scores only, so a reviewer never waits for it.
If the ranker fails, the last ranking stays and ``ranker_error`` says why.
"""

from __future__ import annotations

import hashlib
import logging
import random
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, TextField
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast
from django.utils import timezone

from classification import services as classification_services
from classification.engine.types import article_text
from core.models import WorkerHeartbeat
from core.queueing import task_send_on_commit
from screening import encoder, ranker, ranker_choice, vector_fill
from screening.models import Record, ScreeningSession

logger = logging.getLogger(__name__)

TASK = "screening.tasks.ranker_refresh"
# A refresh that has held the lock this long died with its worker; the next ask takes over.
# Sooner when no live inference worker was already up when it took the lock (ranker_holder_gone).
LOCK_STALE = timedelta(minutes=10)
CHUNK = 1000
FEATURES_KEPT = 2  # sessions whose feature matrices a worker keeps between refreshes
_FEATURES: dict[tuple[int, str, bool], Any] = {}
WORKER_STOPPED = ("The ranker's worker stopped before it finished; the ranking will refresh "
                  "on the next decisions.")


def priority_of(*, scores: dict[str, float], order: str) -> float:
    return ranker.priority(scores=scores, order=order)


def ranker_holder_gone(*, since: Any, now: Any = None,
                       workers: list[WorkerHeartbeat] | None = None) -> bool:
    """Whether the refresh that took the lock at `since` can no longer be running.

    The lock is stamped when a refresh is asked and again when a worker starts it. Once a
    heartbeat's timeout has passed, a refresh is alive only on an inference worker that is live
    and was already up at the stamp: a killed worker stops beating and a restarted one starts
    anew (the task, acknowledged when it started, died with it). A refresh still waiting in the
    queue is judged the same way; clearing its lock only lets a second ask through.
    """
    now = now or timezone.now()
    age = now - since
    if age > LOCK_STALE:
        return True
    if age.total_seconds() <= settings.WORKER_HEARTBEAT_TIMEOUT:
        return False
    if workers is None:
        workers = list(WorkerHeartbeat.objects.all())
    return not any(w.is_live(now=now) and w.serves(settings.QUEUE_INFERENCE)
                   and w.started_at <= since for w in workers)


def ranker_running(*, session: ScreeningSession) -> bool:
    """What the page and the API say: a refresh holds the lock and its worker may be at it."""
    since = session.ranker_running_since
    return since is not None and not ranker_holder_gone(since=since)


def ranking_state(*, session: ScreeningSession, records: int) -> dict[str, Any]:
    """What the page and the API say the ranking is doing (`text`), the ranker in use per label
    with its candidates' figures (`labels`) and the sentence vectors' progress (`vectors`)."""
    choice = session.ranker_choice or {}
    ranked = choice.get("labels", {})
    vectors = vector_fill.vectors_progress(session=session, records=records)
    if not ranked:
        text = "Random order until each label has a yes and a no"
        if session.ranking_refreshed_at and session.starting_model_id:
            text = "Ranked by the starting model until each label has a yes and a no"
        elif session.ranking_refreshed_at and "labels" not in choice:  # ranked before choices
            text = "Ranked on the decisions so far; the next refresh names its ranker"
    elif len(session.labels) == 1:
        text = ranked[session.labels[0]]["text"]
    else:
        text = "; ".join(f"{label}: " + (ranked[label]["text"] if label in ranked
                                         else "random order until it has a yes and a no")
                         for label in session.labels)
    if ranked and vectors["wanted"] and not choice.get("vectors"):
        ready, total = vectors["ready"], vectors["total"]
        text += (f"; {vectors['error']}" if vectors["error"] else
                 f"; sentence vectors {100 * ready // total}% ready" if ready < total else
                 "; sentence vectors ready, judged at the next refresh")
    if ranker_running(session=session):
        # Before the first ranking the random order is about to end: say only that it is.
        text = "Refreshing the ranking…" + (f" {text}" if ranked else "")
    return {"text": text, "labels": ranked, "vectors": vectors}


def ranker_locks_clear_stale() -> str:
    """Beat's maintenance step (core.registry): release the locks whose refresh's worker
    stopped, saying so on the session, so the next decisions refresh the ranking again."""
    now = timezone.now()
    workers = list(WorkerHeartbeat.objects.all())
    cleared = 0
    held = ScreeningSession.objects.filter(
        ranker_running_since__lt=now - timedelta(seconds=settings.WORKER_HEARTBEAT_TIMEOUT))
    for pk, since in held.values_list("pk", "ranker_running_since"):
        if ranker_holder_gone(since=since, now=now, workers=workers):
            # Only the stamp read: a refresh that started meanwhile keeps its lock.
            cleared += ScreeningSession.objects.filter(pk=pk, ranker_running_since=since).update(
                ranker_running_since=None, ranker_error=WORKER_STOPPED)
    return f"{cleared} screening ranker lock(s) of stopped workers released" if cleared else ""


def ranker_lock_take(*, session_id: int) -> bool:
    """Take the refresh lock if nobody holds it (or its holder is gone); whether we got it."""
    now = timezone.now()
    found = ScreeningSession.objects.filter(pk=session_id)
    if found.filter(ranker_running_since__isnull=True).update(ranker_running_since=now):
        return True
    since = found.values_list("ranker_running_since", flat=True).first()
    return bool(since and ranker_holder_gone(since=since, now=now) and found.filter(
        ranker_running_since=since).update(ranker_running_since=now))


def ranker_refresh_request(*, session_id: int) -> bool:
    """Send a refresh when ``ranker_every`` records became final since the last one, or when
    a label not ranked yet has its first yes and no: ranking starts then, not ten records on."""
    due = ScreeningSession.objects.filter(
        pk=session_id, final_count__gte=F("ranked_at_count") + F("ranker_every"))
    if not (due.exists() or _label_newly_learnable(session_id)) or not ranker_lock_take(
            session_id=session_id):
        return False

    def unreachable(reason: str) -> None:
        ScreeningSession.objects.filter(pk=session_id).update(
            ranker_running_since=None, ranker_error=f"The ranking was not refreshed: {reason}")

    try:
        task_send_on_commit(name=TASK, args=(session_id,), on_unreachable=unreachable)
    except Exception:
        logger.warning("screening %s: ranker refresh not sent", session_id)
    return True


def _label_newly_learnable(session_id: int) -> bool:
    found = ScreeningSession.objects.filter(pk=session_id).values_list(
        "labels", "ranker_choice").first()
    if found is None:
        return False
    labels, choice = found
    ranked = (choice or {}).get("labels", {})
    finals = Record.objects.filter(session_id=session_id, done=True)
    for label in labels:
        if label in ranked:
            continue
        answers = finals.annotate(answer=Cast(KeyTextTransform(label, "final"), TextField()))
        if answers.filter(answer="yes").exists() and answers.filter(answer="no").exists():
            return True
    return False


def starting_scores_request(*, session_id: int) -> None:
    """At creation: the starting model's scores become the first refresh, on the worker.

    Scoring a large collection with a model takes seconds to minutes, so the request that
    creates the session only takes the lock and sends the task on commit; the records wait in
    a random order meanwhile. If the broker is down, the lock is released, the page says why,
    and ``starting_pending`` stays set: the next refresh scores with the model first.
    """
    if not ranker_lock_take(session_id=session_id):
        return

    def unreachable(reason: str) -> None:
        ScreeningSession.objects.filter(pk=session_id).update(
            ranker_running_since=None,
            ranker_error=f"The starting model has not ranked the records yet: {reason}")

    try:
        task_send_on_commit(name=TASK, args=(session_id,), on_unreachable=unreachable)
    except Exception:
        logger.warning("screening %s: starting model's scoring not sent", session_id)


def ranker_refresh(*, session_id: int) -> ScreeningSession:
    """Refit the ranker on the final decisions and store scores for every undecided record.

    Called by the task, holding the lock (taken here if the caller did not). A session whose
    starting model has not scored yet is scored with it first. Failure keeps the previous
    scores and records the reason in ``ranker_error``; the lock is always released.
    """
    session = ScreeningSession.objects.select_related("starting_model").get(pk=session_id)
    # Stamped again at the start on the worker, which is up by now (see ranker_holder_gone).
    ScreeningSession.objects.filter(pk=session_id).update(ranker_running_since=timezone.now())
    started_count = session.final_count
    problem = _starting_step(session) if session.starting_pending else ""
    try:
        note, choice = _refresh(session)
    except Exception as exc:
        logger.exception("screening %s: ranker failed", session_id)
        ScreeningSession.objects.filter(pk=session_id).update(
            ranker_error=f"The ranker failed ({type(exc).__name__}: {exc}); the last ranking "
                         "is kept.", ranker_running_since=None, ranked_at_count=started_count)
    else:
        ScreeningSession.objects.filter(pk=session_id).update(
            ranker_error=" ".join(p for p in (problem, note) if p), ranker_choice=choice,
            ranking_refreshed_at=timezone.now(), ranker_running_since=None,
            ranked_at_count=started_count)
    session.refresh_from_db()
    return session


def _starting_step(session: ScreeningSession) -> str:
    """Store the starting model's probabilities on the undecided records; "" or why not.

    Done once: a model that cannot score (its files gone, say) would fail again at every
    refresh, so the session goes on in the ranker's hands and the page says why.
    """
    model = session.starting_model
    problem = ""
    try:
        if model is None:
            raise ValueError("it was deleted")
        _starting_scores_store(session, model)
    except Exception as exc:
        logger.exception("screening %s: the starting model could not score", session.pk)
        problem = (f"The starting model could not rank the records ({exc}); they stay in a "
                   "random order until the ranker learns from your decisions.")
    ScreeningSession.objects.filter(pk=session.pk).update(starting_pending=False)
    return problem


def _starting_scores_store(session: ScreeningSession, model: Any) -> None:
    rows = list(session.records.filter(done=False).order_by("position").values_list(
        "pk", "title", "abstract", "scores"))
    for start in range(0, len(rows), CHUNK):
        chunk = rows[start:start + CHUNK]
        predictions = classification_services.mlmodel_predict(
            ml_model=model, texts=[article_text(t, a) or "(empty)" for _, t, a, _ in chunk],
            fast=True)
        updates = []
        for (pk, _t, _a, scores), prediction in zip(chunk, predictions, strict=True):
            # A label the ranker already learned (decisions made while this ran) keeps its own.
            fresh = {label: round(float(prediction["probabilities"].get(label, 0.0)), 5)
                     for label in session.labels}
            updates.append(Record(pk=pk, scores={**fresh, **scores}))
        Record.objects.bulk_update(updates, ["scores"], batch_size=CHUNK)


def _refresh(session: ScreeningSession) -> tuple[str, dict[str, Any]]:
    """Rank the undecided records; ("" or why no vectors were read, the ranker's choice)."""
    if "raise_in_ranker" in (getattr(settings, "MEDLITBOT_FAULT_INJECTION", "") or ""):
        raise RuntimeError("injected fault raise_in_ranker")
    default = encoder.words_default()  # an unknown SCREENING_RANKER fails here, naming them
    rows = list(session.records.order_by("position").values_list(
        "pk", "title", "abstract", "final", "done", "scores"))
    learnable: dict[str, tuple[list[int], list[int]]] = {}
    for label in session.labels:
        decided = [i for i, r in enumerate(rows) if r[3].get(label) in ("yes", "no")]
        y = [1 if rows[i][3][label] == "yes" else 0 for i in decided]
        if ranker.can_learn(y=y):
            learnable[label] = (decided, y)
    fresh: dict[str, Any] = {}
    labels: dict[str, Any] = {}
    note = ""
    if learnable:  # the starting step's refresh has no decisions yet: no TF-IDF to fit
        texts = [article_text(r[1], r[2]) for r in rows]
        vectors, note = _vectors_if_ready(session, texts)
        features = _features_kept(session.pk, texts, vectors)
        for label, (decided, y) in learnable.items():
            fresh[label], judged = ranker_choice.label_rank(
                features=features, decided=decided, y=y, with_vectors=vectors is not None,
                default=default)
            labels[label] = judged.as_dict()
    updates = []
    for i, (pk, _t, _a, _f, done, scores) in enumerate(rows):
        if done:
            continue
        scores = dict(scores)
        scores.update({label: round(float(values[i]), 5) for label, values in fresh.items()})
        value = (ranker.priority(scores=scores, order=session.order) if scores
                 else random.random())
        updates.append((pk, scores, value))
    _ranking_write(updates)
    return note, {"labels": labels, "vectors": vectors is not None if learnable else False}


def _features_kept(session_id: int, texts: list[str], vectors: Any) -> Any:
    """The session's feature matrices as the last refresh in this worker built them, if its
    texts and vectors are the same: TF-IDF is fitted on every text, a refit on the decisions
    only, and a bigram TF-IDF of 20,000 abstracts takes a minute of a loaded CPU."""
    digest = hashlib.sha256("\x00".join(texts).encode("utf-8", "surrogatepass")).hexdigest()
    key = (session_id, digest, vectors is not None)
    if key not in _FEATURES:
        while len(_FEATURES) >= FEATURES_KEPT:
            _FEATURES.pop(next(iter(_FEATURES)))
        _FEATURES[key] = ranker_choice.Features(texts=texts, vectors=vectors)
    return _FEATURES[key]


def _vectors_if_ready(session: ScreeningSession, texts: list[str]) -> tuple[Any, str]:
    """(every record's sentence vector from the cache, or None; "" or why none). Never encodes:
    missing vectors are asked of the background fill, and the ranking goes on by words."""
    if not encoder.vectors_wanted():
        return None, ""
    if session.vectors_error.startswith(vector_fill.ENCODER_FAILED):
        return None, session.vectors_error
    vectors = None
    if session.vectors_ready >= len(texts):
        try:
            vectors = encoder.texts_cached(texts)
        except Exception as exc:  # the encoder's files unreadable: its cache key cannot be made
            logger.exception("screening %s: the sentence vectors could not be read", session.pk)
            return None, (f"Ranked on words only: the sentence vectors could not be read "
                          f"({type(exc).__name__}: {exc}).")
    if vectors is None and session.vectors_filling_since is None:
        # Never asked (a session made before the fill existed), or the cache was trimmed since.
        ScreeningSession.objects.filter(pk=session.pk).update(vectors_ready=0)
        vector_fill.vectors_fill_request(session_id=session.pk)
    return vectors, ""


def _ranking_write(updates: list[tuple[int, dict[str, float], float]]) -> None:
    """Store (pk, scores, priority) rows, CHUNK rows a transaction, one executemany each.

    Saves wait while this writes: SQLite's write lock, or on PostgreSQL the row lock of a
    record being decided. bulk_update built a CASE expression per row and spent 12 s on
    20,000 records of the shared 2-core machine in one transaction, so a save made then took
    up to 12 s (scripts/benchmark_screening.py); this takes about half a second in all, and a
    save waits for one chunk at most. The fields prepare their own values (JSON text for
    SQLite, Jsonb for PostgreSQL). A failure part-way leaves some records ranked anew and the
    rest as before: still an order, the next refresh redoes all of them.
    """
    fields = Record._meta
    scores, priority = fields.get_field("scores"), fields.get_field("priority")
    quote = connection.ops.quote_name
    sql = (f"UPDATE {quote(fields.db_table)} SET {quote(scores.column)} = %s, "
           f"{quote(priority.column)} = %s WHERE {quote(fields.pk.column)} = %s")
    for start in range(0, len(updates), CHUNK):
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.executemany(sql, [
                (scores.get_db_prep_save(values, connection),
                 priority.get_db_prep_save(value, connection), pk)
                for pk, values, value in updates[start:start + CHUNK]])
