"""A queued job whose task message vanished from Redis (a restart without persistence, a flush)
would wait forever. cleanup_stuck_training (and the maintenance step, which runs the same code)
finds it by reading the real broker and sends its message again, once, recording why on the
row; lost a second time it is failed with a reason, and resume queues it again. A job whose
message is still there, or that is too young to judge, is left alone."""

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


def test_a_lost_message_is_sent_again_once_then_the_job_is_failed_and_can_be_resumed(
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
    assert "would requeue" in report
    assert TrainingJob.objects.get(pk=lost.pk).status == "queued"

    report = cleanup()
    lost.refresh_from_db()
    assert lost.status == "queued"  # sent again, with the same task id
    assert broker_holds_task(task_id=lost.celery_task_id) is True
    assert lost.reason.startswith("Requeued once: the broker lost its task message at ")
    assert "broker no longer holds its task message" in lost.reason
    assert "Requeued once" in lost.log_tail
    assert TrainingJob.objects.get(pk=kept.pk).status == "queued"  # its message is still there
    assert TrainingJob.objects.get(pk=fresh.pk).status == "queued"  # too young to judge
    assert "1 stuck job(s) handled" in report
    assert "requeued (its message was lost)" in report

    # Lost a second time: failed, so a message lost over and over is not sent for ever.
    redis.Redis.from_url(settings.CELERY_BROKER_URL).delete(settings.QUEUE_TRAINING)
    age(lost, 20)
    age(kept, 1)
    age(fresh, 1)
    cleanup()
    lost.refresh_from_db()
    assert lost.status == "failed"
    assert "again after it was requeued once" in lost.reason
    assert "Resume" in lost.reason
    assert lost.ml_model.status == "failed"

    with django_capture_on_commit_callbacks(execute=True):
        resumed = services.training_job_resume(job=lost)
    assert resumed.status == "queued"
    assert resumed.attempt == 2
    assert broker_holds_task(task_id=resumed.celery_task_id) is True
