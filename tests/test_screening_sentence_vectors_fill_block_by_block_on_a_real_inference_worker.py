"""On a real inference worker, a session made with the vectors ranker gets its sentence vectors
in the background: the fill sent at creation embeds one block a task, sends the next block as a
task of its own, counts the records as it goes and ends with every vector in the embedding
cache; the next refresh ranks with them in hand."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from screening import services, vector_fill
from screening.models import Record, ScreeningSession
from screening.tasks import ranker_refresh
from tests.batch_support import start_inference_worker
from tests.job_support import wait_for
from tests.screening_desk_support import team_with_records

pytestmark = [pytest.mark.worker, pytest.mark.timeout(300)]

TASK = "screening.tasks.session_vectors_fill"


def test_the_fill_embeds_every_record_a_block_a_task_then_the_ranker_reads_them(
    start_worker: Any, user: Any, media_root: Path, settings: Any, tmp_path: Path,
) -> None:
    cache = tmp_path / "embeddings"
    settings.SCREENING_RANKER, settings.EMBEDDING_CACHE_DIR = "svm-embed", str(cache)
    worker = start_inference_worker(start_worker, SCREENING_RANKER="svm-embed",
                                    EMBEDDING_CACHE_DIR=str(cache))
    count = vector_fill.BLOCK * 2 + 5  # three blocks
    team = team_with_records(user, count)
    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="Vec",
                                      labels=["oncological"])

    def filled() -> ScreeningSession | None:
        session.refresh_from_db()
        done = session.vectors_ready == count and session.vectors_filling_since is None
        return session if done or session.vectors_error else None

    wait_for(filled, 240, "the sentence vectors")
    assert session.vectors_error == ""
    succeeded = re.findall(rf"Task {re.escape(TASK)}\[[0-9a-f-]+\] succeeded in ", worker.log())
    assert len(succeeded) == 3, worker.log()
    assert len(list(cache.rglob("*.npz"))) == 3  # one block each, kept
    records = list(Record.objects.filter(session=session))
    for label, value in (("oncological", "yes"), ("cardiovascular", "no")):
        record = next(r for r in records if label in r.truth)
        Record.objects.filter(pk=record.pk).update(final={"oncological": value}, done=True)
    ranker_refresh(session.pk)  # here: this process reads the worker's cache from disk
    session.refresh_from_db()
    assert session.ranker_error == ""
    assert session.ranker_choice["vectors"] is True
