from django.urls import include, path, re_path

from classification.views import adapt, batches, classify, evaluation, jobs, models

app_name = "classification"
urlpatterns = [
    path("models/", models.model_list, name="model_list"),
    path("models/new/", models.model_new, name="model_new"),
    path("models/search/", models.search_new, name="search_new"),
    path("models/adapt/", adapt.adapt_new, name="adapt_new"),
    path("models/compare/", models.model_compare, name="model_compare"),
    path("models/ensemble/", models.ensemble_create, name="ensemble_create"),
    path("models/<int:pk>/", models.model_detail, name="model_detail"),
    path("models/<int:pk>/download/", models.model_download, name="model_download"),
    path("models/<int:pk>/export/", models.model_export, name="model_export"),
    path("models/<int:pk>/evaluate/", evaluation.model_evaluate, name="model_evaluate"),
    # Evaluation ids are UUIDs written as 32 hex characters, like batches'.
    re_path(r"^evaluations/(?P<job_id>[0-9a-f]{32})/$", evaluation.evaluation_detail,
            name="evaluation_detail"),
    re_path(r"^evaluations/(?P<job_id>[0-9a-f]{32})/progress/$",
            evaluation.evaluation_progress, name="evaluation_progress"),
    re_path(r"^evaluations/(?P<job_id>[0-9a-f]{32})/cancel/$", evaluation.evaluation_cancel,
            name="evaluation_cancel"),
    re_path(r"^evaluations/(?P<job_id>[0-9a-f]{32})/again/$", evaluation.evaluation_rerun,
            name="evaluation_rerun"),
    path("models/<int:pk>/delete/", models.model_delete, name="model_delete"),
    path("jobs/<int:pk>/", jobs.job_detail, name="job_detail"),
    path("jobs/<int:pk>/progress/", jobs.job_progress, name="job_progress"),
    path("jobs/<int:pk>/cancel/", jobs.job_cancel, name="job_cancel"),
    path("jobs/<int:pk>/resume/", jobs.job_resume, name="job_resume"),
    path("classify/", classify.classify, name="classify"),
    path("classify/explain/", classify.classify_explain, name="classify_explain"),
    path("classify/batches/", batches.batch_create, name="batch_create"),
    # Batch ids are UUIDs written as 32 hex characters; anything else never reaches the view.
    re_path(r"^classify/batches/(?P<batch_id>[0-9a-f]{32})/$", batches.batch_detail,
            name="batch_detail"),
    re_path(r"^classify/batches/(?P<batch_id>[0-9a-f]{32})/progress/$", batches.batch_progress,
            name="batch_progress"),
    re_path(r"^classify/batches/(?P<batch_id>[0-9a-f]{32})/download/$", batches.batch_download,
            name="batch_download"),
    re_path(r"^classify/batches/(?P<batch_id>[0-9a-f]{32})/cancel/$", batches.batch_cancel,
            name="batch_cancel"),
    re_path(r"^classify/batches/(?P<batch_id>[0-9a-f]{32})/delete/$", batches.batch_delete,
            name="batch_delete"),
    path("", include("classification.review.urls")),
]
