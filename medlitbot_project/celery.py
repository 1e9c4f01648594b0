"""The one Celery app. Settings live in Django settings under CELERY_* (see settings.py)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "medlitbot_project.settings")

app = Celery("medlitbot_project")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
