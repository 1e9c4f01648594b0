"""A session's sentence vectors, computed in the background into the embedding cache.

Embedding a collection with MiniLM takes minutes on a CPU (530 s for the first refresh of a
loaded 2-core machine), so no refresh computes them: the session asks for them when it is
created and whenever a refresh finds them missing, ``screening.tasks.session_vectors_fill``
embeds the records a block a task on the inference queue through the cache (a block kept is
never encoded again, whoever embeds it next), and counts them in ``vectors_ready``, which
is what the page's "sentence vectors 40% ready" reads. The ranker reads them only once all are
cached (screening/ranking.py), and ranks with them only when they judge better.

One fill at a time per session: a conditional UPDATE takes ``vectors_filling_since``, which
each block's task stamps again; a stamp older than FILL_STALE is a fill whose worker died, and
the next ask takes over where the count stood.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.db.models import Q
from django.utils import timezone

from classification.engine.types import article_text
from core.queueing import QueueUnavailable, task_send, task_send_on_commit
from screening import encoder
from screening.models import ScreeningSession

logger = logging.getLogger(__name__)

TASK = "screening.tasks.session_vectors_fill"
ENCODER_FAILED = "Ranked on words only"  # vectors_error's start when retrying would fail again
BLOCK = 64  # texts a task: seconds on a loaded CPU, so refreshes queued meanwhile soon get in
FILL_STALE = timedelta(minutes=3)


def vectors_fill_request(*, session_id: int) -> bool:
    """Send the fill if the deployment ranks with vectors and no live fill holds the session;
    whether it was sent. A broker that is down is said on the session, never raised."""
    if not encoder.vectors_wanted():
        return False
    now = timezone.now()
    free = Q(vectors_filling_since__isnull=True) | Q(vectors_filling_since__lt=now - FILL_STALE)
    if not ScreeningSession.objects.filter(free, pk=session_id).update(
            vectors_filling_since=now, vectors_error=""):
        return False

    def unreachable(reason: str) -> None:
        ScreeningSession.objects.filter(pk=session_id, vectors_filling_since=now).update(
            vectors_filling_since=None,
            vectors_error=f"The sentence vectors were not computed: {reason}")

    try:
        task_send_on_commit(name=TASK, args=(session_id,), on_unreachable=unreachable)
    except Exception:
        logger.warning("screening %s: sentence vectors not sent", session_id)
    return True


def session_vectors_fill(*, session_id: int) -> None:
    """Embed the session's next BLOCK records into the cache, count them, and send the rest as
    a task of its own: between blocks the worker takes the refreshes queued meanwhile, so a
    fill of minutes never holds a reviewer's ranking back on a worker of one thread.

    An encoder that cannot load or embed stops the fill with the reason in ``vectors_error``;
    the session goes on ranking by words, which the page says.
    """
    found = ScreeningSession.objects.filter(pk=session_id)
    session = found.first()
    if session is None:  # deleted while its fill waited in the queue
        return
    found.update(vectors_filling_since=timezone.now())
    total = session.records.count()
    start = min(session.vectors_ready, total)
    block = [article_text(t, a) for t, a in session.records.order_by("position").values_list(
        "title", "abstract")[start:start + BLOCK]]
    try:
        if block:
            encoder.texts_embed(block)
    except Exception as exc:
        logger.exception("screening %s: the sentence encoder failed", session_id)
        found.update(vectors_filling_since=None, vectors_error=(
            f"{ENCODER_FAILED}: the sentence encoder could not embed the records "
            f"({type(exc).__name__}: {exc})."))
        return
    ready = start + len(block)
    if ready >= total:
        found.update(vectors_ready=total, vectors_filling_since=None)
        return
    found.update(vectors_ready=ready, vectors_filling_since=timezone.now())
    try:
        task_send(name=TASK, args=(session_id,))
    except QueueUnavailable as exc:
        found.update(vectors_filling_since=None, vectors_error=(
            f"The sentence vectors stopped at {ready} of {total} records: {exc.message}"))


def vectors_progress(*, session: ScreeningSession, records: int) -> dict[str, object]:
    """What the page and the API say of the vectors: wanted, ready of total, filling, why not."""
    return {"wanted": encoder.vectors_wanted(), "ready": min(session.vectors_ready, records),
            "total": records, "filling": session.vectors_filling_since is not None,
            "error": session.vectors_error}
