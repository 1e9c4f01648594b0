from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from classification.models import MLModel, TrainingJob
from dataset_management.models import Dataset
from web.listings import dataset_rows, model_rows


@login_required
def dashboard(request: HttpRequest) -> HttpResponse:
    owner = request.user
    active_jobs = (
        TrainingJob.objects.active()
        .filter(ml_model__owner=owner)
        .select_related("ml_model")
        .order_by("-created_at")[:20]
    )
    recent_jobs = (
        TrainingJob.objects.filter(ml_model__owner=owner)
        .exclude(status__in=TrainingJob.ACTIVE_STATUSES)
        .select_related("ml_model")
        .order_by("-updated_at")[:5]
    )
    models = model_rows(owner=owner)[:8]
    datasets = dataset_rows(owner=owner)[:8]
    return render(
        request,
        "dashboard.html",
        {
            "active_jobs": active_jobs,
            "recent_jobs": recent_jobs,
            "models": models,
            "datasets": datasets,
            "counts": {
                "datasets": Dataset.objects.filter(owner=owner).count(),
                "models": MLModel.objects.filter(owner=owner).count(),
                "trained": MLModel.objects.filter(
                    owner=owner, status=MLModel.Status.TRAINED
                ).count(),
            },
        },
    )
