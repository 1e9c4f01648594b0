from django.apps import AppConfig


class ProjectsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "projects"
    verbose_name = "Projects and members"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_in

        from .middleware import project_last_restore

        user_logged_in.connect(project_last_restore, dispatch_uid="projects.last_project")
