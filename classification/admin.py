from django.contrib import admin

from classification.models import MLModel, TrainingJob


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
