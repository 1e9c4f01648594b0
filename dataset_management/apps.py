from django.apps import AppConfig


def abandoned_staged_uploads_remove() -> str:
    """Beat's maintenance step (core.registry) for previews nobody finished importing."""
    from dataset_management.staging import staging_purge_abandoned

    removed = staging_purge_abandoned()
    return f"{removed} abandoned staged upload(s) removed" if removed else ""


def stale_imports_fail() -> str:
    """Beat's maintenance step (core.registry) for imports whose worker died or whose message
    the broker lost: queued again once with their kept upload, then failed."""
    from dataset_management.import_maintenance import import_jobs_fail_stale

    return import_jobs_fail_stale()


class DatasetManagementConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "dataset_management"
    verbose_name = "Datasets"

    def ready(self) -> None:
        from core import registry

        registry.maintenance_step_register(
            name="abandoned_staged_uploads", func=abandoned_staged_uploads_remove, order=40
        )
        registry.maintenance_step_register(
            name="stale_dataset_imports", func=stale_imports_fail, order=45
        )
