from django.apps import AppConfig


class ApiConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "api"
    verbose_name = "MedLitBot API"

    def ready(self) -> None:
        # Connects the receivers that track sessions and revoke tokens when a password is set.
        from api import token_sessions  # noqa: F401
