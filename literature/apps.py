from django.apps import AppConfig


def search_runs_maintain() -> str:
    """Beat's maintenance step (core.registry): digests of classified runs, stale runs failed."""
    from literature.runs import search_runs_maintain as maintain

    return maintain()


def describe_run(args: list, kwargs: dict) -> str:
    run_id = args[0] if args else kwargs.get("run_id")
    return f"PubMed search run {run_id}"


class LiteratureConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "literature"
    verbose_name = "Saved PubMed searches"

    def ready(self) -> None:
        from core import registry

        registry.maintenance_step_register(name="saved_search_runs",
                                           func=search_runs_maintain, order=60)
        registry.task_describer_register(task_name="literature.tasks.search_run_execute",
                                         func=describe_run)
