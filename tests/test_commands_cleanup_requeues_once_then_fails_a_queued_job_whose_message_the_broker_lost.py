"""A queued job whose task message vanished from Redis (a restart without persistence, a flush)
would wait forever. cleanup_stuck_training finds it by reading the real broker, marks it failed
with a reason, leaves a job whose message is still there alone, and resume queues it again."""

from __future__ import annotations

import io
from datetime import timedelta

import redis
from django.conf import settings
from django.core.management import call_command
from django.utils import timezone

from classification import services
from classification.models import TrainingJob
from core.broker import broker_holds_task


def queued_job(dataset, user, name: str, capture) -> TrainingJob:
    with capture(execute=True):  # the real enqueue, sent to Redis on commit
        return services.training_job_create(
            owner=user, dataset=dataset, model_type="tfidf_logreg", name=name, config={}
        )


def age(job: TrainingJob, minutes: int) -> None:
    TrainingJob.objects.filter(pk=job.pk).update(
        updated_at=timezone.now() - timedelta(minutes=minutes)
    )


def cleanup(*args: str) -> str:
    out = io.StringIO()
    call_command("cleanup_stuck_training", "--stale-minutes", "5", *args, stdout=out)
    return out.getvalue()


def test_a_queued_job_whose_message_was_lost_is_failed_and_can_be_queued_again(
    clean_broker, slice_dataset, user, django_capture_on_commit_callbacks
):
    lost = queued_job(slice_dataset, user, "Lost", django_capture_on_commit_callbacks)
    assert broker_holds_task(task_id=lost.celery_task_id) is True
    # Redis restarted empty (only this run's queue, so a suite running beside us is unharmed).
    redis.Redis.from_url(settings.CELERY_BROKER_URL).delete(settings.QUEUE_TRAINING)
    kept = queued_job(slice_dataset, user, "Kept", django_capture_on_commit_callbacks)
    fresh = queued_job(slice_dataset, user, "Fresh", django_capture_on_commit_callbacks)
    age(lost, 20)
    age(kept, 20)

    report = cleanup("--dry-run")
    assert "would mark failed" in report
    assert TrainingJob.objects.get(pk=lost.pk).status == "queued"

    report = cleanup()
    lost.refresh_from_db()
    assert lost.status == "failed"
    assert "broker no longer holds its task message" in lost.reason
    assert "Resume" in lost.reason
    assert lost.ml_model.status == "failed"
    assert TrainingJob.objects.get(pk=kept.pk).status == "queued"  # its message is still there
    assert TrainingJob.objects.get(pk=fresh.pk).status == "queued"  # too young to judge
    assert "1 stuck job(s) handled" in report

    assert "No running or waiting training jobs" in cleanup()  # idempotent: nothing to do

    with django_capture_on_commit_callbacks(execute=True):
        resumed = services.training_job_resume(job=lost)
    assert resumed.status == "queued"
    assert resumed.attempt == 2
    assert broker_holds_task(task_id=resumed.celery_task_id) is True
