"""Saved searches' Celery tasks: thin, each loads by id (or nothing) and calls one service."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="literature.tasks.search_run_execute", ignore_result=True)
def search_run_execute(run_id: int) -> None:
    from literature.runs import search_run_execute as execute

    execute(run_id=run_id)


@shared_task(name="literature.tasks.saved_searches_tick", ignore_result=True)
def saved_searches_tick() -> None:
    """Celery beat's periodic task (CELERY_BEAT_SCHEDULE["saved_searches"]): digests for runs
    whose batch ended, then every scheduled search that is due."""
    from literature.runs import saved_searches_tick as tick

    tick()
