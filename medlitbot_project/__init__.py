# Importing the Celery app here makes @shared_task bind to it in every Django process.
from medlitbot_project.celery import app as celery_app

__all__ = ("celery_app",)
