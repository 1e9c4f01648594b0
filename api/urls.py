from django.urls import path
from drf_spectacular.views import SpectacularAPIView
from rest_framework.authtoken.views import obtain_auth_token

from api import views
from api.docs import OfflineSwaggerView

app_name = "api"
urlpatterns = [
    path("token/", obtain_auth_token, name="token"),
    path("datasets/", views.DatasetListCreateApi.as_view(), name="dataset_list"),
    path("datasets/<int:pk>/", views.DatasetDetailApi.as_view(), name="dataset_detail"),
    path("models/", views.ModelListCreateApi.as_view(), name="model_list"),
    path("models/<int:pk>/", views.ModelDetailApi.as_view(), name="model_detail"),
    path("models/<int:pk>/metrics/", views.ModelMetricsApi.as_view(), name="model_metrics"),
    path("models/<int:pk>/predict/", views.ModelPredictApi.as_view(), name="model_predict"),
    path("jobs/", views.JobListCreateApi.as_view(), name="job_list"),
    path("jobs/<int:pk>/", views.JobStatusApi.as_view(), name="job_status"),
    path("jobs/<int:pk>/cancel/", views.JobCancelApi.as_view(), name="job_cancel"),
    path("jobs/<int:pk>/resume/", views.JobResumeApi.as_view(), name="job_resume"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", OfflineSwaggerView.as_view(url_name="api:schema"), name="docs"),
]
