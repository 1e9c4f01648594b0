from django.apps import AppConfig


class DatasetManagementConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "dataset_management"
    verbose_name = "Datasets"
