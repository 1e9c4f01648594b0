from django.apps import AppConfig


class CoreConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "core"
    verbose_name = "MedLitBot core"

    def ready(self) -> None:
        # Connects the worker heartbeat's Celery signal receivers. Every Celery worker sets
        # Django up before it is ready, so this runs in each of them; in the web and in
        # commands the receivers are connected but never fire.
        from django.contrib.auth.signals import user_login_failed

        # core.heartbeat connects its receivers on import.
        from core import heartbeat, maintenance, metrics, registry  # noqa: F401
        from core.loginthrottle import count_failure
        from core.uploads import upload_spool_make

        # Before the system checks, which refuse a FILE_UPLOAD_TEMP_DIR that does not exist.
        upload_spool_make()

        # Every failed password login counts against its client address (core/loginthrottle.py).
        user_login_failed.connect(count_failure, dispatch_uid="core.loginthrottle.count_failure")

        # After the apps' own (they register below 90), so the log and /metrics keep one order.
        registry.maintenance_step_register(
            name="old_worker_pings", func=maintenance.worker_pings_purge_old, order=90
        )
        registry.maintenance_step_register(
            name="abandoned_upload_files", func=maintenance.upload_spool_purge, order=91
        )
        registry.metrics_collector_register(
            name="queues", func=metrics.queue_depths_read, order=90
        )
        registry.metrics_collector_register(
            name="workers", func=metrics.worker_heartbeats_read, order=91
        )
