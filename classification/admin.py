from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from classification.models import MLModel, StatusChange, TrainingJob


@admin.register(MLModel)
class MLModelAdmin(admin.ModelAdmin):
    list_display = ("id", "name", "model_type", "owner", "dataset", "status", "created_at")
    list_filter = ("model_type", "status")
    search_fields = ("name",)


@admin.register(TrainingJob)
class TrainingJobAdmin(admin.ModelAdmin):
    list_display = (
        "id", "ml_model", "status", "phase", "progress_percentage", "attempt", "heartbeat_at",
    )
    list_filter = ("status", "phase")
    readonly_fields = ("metrics_history", "device_plan", "created_at", "updated_at")


@admin.register(StatusChange)
class StatusChangeAdmin(admin.ModelAdmin):
    """Read-only: the history is append-only, written by the transitions themselves."""

    list_display = ("at", "job", "batch", "source", "target", "actor", "short_reason")
    list_filter = ("target",)
    list_select_related = ("actor", "job", "batch")
    search_fields = ("reason",)
    raw_id_fields = ("job", "batch", "actor")
    date_hierarchy = "at"

    @admin.display(description="reason")
    def short_reason(self, change: StatusChange) -> str:
        return change.reason[:120]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: StatusChange | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: StatusChange | None = None) -> bool:
        return False
