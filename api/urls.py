from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from api import (
    adaptations,
    batches,
    ensembles,
    evaluations,
    explain,
    imports,
    model_export,
    projects,
    review,
    views,
)
from api.auth import TokenObtainApi
from api.compare import ModelCompareApi
from api.index import ApiIndex
from api.token_api import TokenDetailApi, TokenListCreateApi
from literature import api as literature_api
from screening import api as screening_api
from screening import fulltext_api, fulltext_bulk_api, priors_api, prisma_edit, records_api

app_name = "api"
urlpatterns = [
    path("", ApiIndex.as_view(), name="index"),
    path("token/", TokenObtainApi.as_view(), name="token"),
    path("tokens/", TokenListCreateApi.as_view(), name="token_list"),
    path("tokens/<int:pk>/", TokenDetailApi.as_view(), name="token_detail"),
    path("datasets/", views.DatasetListCreateApi.as_view(), name="dataset_list"),
    path("datasets/<int:pk>/", views.DatasetDetailApi.as_view(), name="dataset_detail"),
    path("datasets/collections/", imports.CollectionCreateApi.as_view(),
         name="dataset_collections"),
    path("datasets/imports/<int:pk>/", imports.ImportJobDetailApi.as_view(), name="dataset_import"),
    path("datasets/imports/<int:pk>/cancel/", imports.ImportJobCancelApi.as_view(),
         name="dataset_import_cancel"),
    path("models/", views.ModelListCreateApi.as_view(), name="model_list"),
    path("models/ensemble/", ensembles.EnsembleCreateApi.as_view(), name="model_ensemble"),
    path("models/compare/", ModelCompareApi.as_view(), name="model_compare"),
    path("models/<int:pk>/", views.ModelDetailApi.as_view(), name="model_detail"),
    path("models/<int:pk>/metrics/", views.ModelMetricsApi.as_view(), name="model_metrics"),
    path("models/<int:pk>/predict/", views.ModelPredictApi.as_view(), name="model_predict"),
    path("models/<int:pk>/explain/", explain.ModelExplainApi.as_view(), name="model_explain"),
    path("models/<int:pk>/batches/", batches.ModelBatchCreateApi.as_view(), name="model_batches"),
    path("models/<int:pk>/evaluations/", evaluations.ModelEvaluationsApi.as_view(),
         name="model_evaluations"),
    re_path(r"^evaluations/(?P<job_id>[0-9a-f]{32})/$", evaluations.EvaluationDetailApi.as_view(),
            name="evaluation_detail"),
    re_path(r"^evaluations/(?P<job_id>[0-9a-f]{32})/cancel/$",
            evaluations.EvaluationCancelApi.as_view(), name="evaluation_cancel"),
    path("batches/", batches.BatchListApi.as_view(), name="batch_list"),
    # Batch ids are UUIDs written as 32 hex characters, as in the web pages' URLs.
    re_path(r"^batches/(?P<batch_id>[0-9a-f]{32})/$", batches.BatchDetailApi.as_view(),
            name="batch_detail"),
    re_path(r"^batches/(?P<batch_id>[0-9a-f]{32})/cancel/$", batches.BatchCancelApi.as_view(),
            name="batch_cancel"),
    re_path(r"^batches/(?P<batch_id>[0-9a-f]{32})/result/$", batches.BatchResultApi.as_view(),
            name="batch_result"),
    *model_export.urlpatterns,
    *review.urlpatterns,
    *screening_api.urlpatterns,
    *fulltext_api.urlpatterns,
    *prisma_edit.urlpatterns,
    *fulltext_bulk_api.urlpatterns,
    *records_api.urlpatterns,
    *priors_api.urlpatterns,
    *literature_api.urlpatterns,
    *projects.urlpatterns,
    path("adaptations/", adaptations.AdaptationCreateApi.as_view(), name="adaptations"),
    path("jobs/", views.JobListCreateApi.as_view(), name="job_list"),
    path("jobs/<int:pk>/", views.JobStatusApi.as_view(), name="job_status"),
    path("jobs/<int:pk>/cancel/", views.JobCancelApi.as_view(), name="job_cancel"),
    path("jobs/<int:pk>/resume/", views.JobResumeApi.as_view(), name="job_resume"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    # The split view serves its init script as a same-origin file (?script), never inline, and
    # the template drops drf-spectacular's inline <style>: the page runs under the CSP.
    path("docs/", SpectacularSwaggerSplitView.as_view(
        url_name="api:schema", template_name="api/swagger_ui.html"), name="docs"),
]
