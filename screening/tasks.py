"""Screening's Celery tasks: thin, each loads by id and calls one service."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="screening.tasks.ranker_refresh", ignore_result=True)
def ranker_refresh(session_id: int) -> None:
    from screening.ranking import ranker_refresh as refresh

    refresh(session_id=session_id)


@shared_task(name="screening.tasks.simulation_run", ignore_result=True)
def simulation_run(run_id: int) -> None:
    from screening.simulation_runs import simulation_run_execute

    simulation_run_execute(run_id=run_id)


@shared_task(name="screening.tasks.session_vectors_fill", ignore_result=True)
def session_vectors_fill(session_id: int) -> None:
    from screening.vector_fill import session_vectors_fill as fill

    fill(session_id=session_id)
