"""Screening's Celery task: thin, it loads by id and calls the service."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="screening.tasks.ranker_refresh", ignore_result=True)
def ranker_refresh(session_id: int) -> None:
    from screening.ranking import ranker_refresh as refresh

    refresh(session_id=session_id)
