from django.apps import AppConfig


class CoreConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "core"
    verbose_name = "MedLitBot core"

    def ready(self) -> None:
        # Connects the worker heartbeat's Celery signal receivers. Every Celery worker sets
        # Django up before it is ready, so this runs in each of them; in the web and in
        # commands the receivers are connected but never fire.
        from core import heartbeat  # noqa: F401
