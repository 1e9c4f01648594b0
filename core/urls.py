"""Health and metrics: no login (see core/views.py for why ProbeMiddleware also serves them)."""

from django.urls import re_path

from core import views

app_name = "core"
# An optional trailing slash: probes are configured by hand and either spelling should work.
urlpatterns = [
    re_path(r"^healthz/?$", views.healthz, name="healthz"),
    re_path(r"^readyz/?$", views.readyz, name="readyz"),
    re_path(r"^metrics/?$", views.metrics_view, name="metrics"),
]
