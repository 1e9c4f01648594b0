from django.apps import AppConfig


class ClassificationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "classification"
    verbose_name = "Classification"

    def ready(self) -> None:
        # Connects the receivers that write a job's or a batch's first history row.
        from classification import core_hooks
        from classification.history import services  # noqa: F401

        # Beat's maintenance steps, the training-job metrics and the heartbeat's job wording.
        core_hooks.register()
