"""Included by classification/urls.py, so the names are classification:review:<name>."""

from django.urls import re_path

from classification.review import views

app_name = "review"
# Batch ids are UUIDs written as 32 hex characters; anything else never reaches the views.
BATCH = r"^classify/batches/(?P<batch_id>[0-9a-f]{32})/review/"
urlpatterns = [
    re_path(BATCH + r"$", views.review_page, name="page"),
    re_path(BATCH + r"(?P<row>[0-9]{1,9})/$", views.review_item_save, name="item"),
    re_path(BATCH + r"dataset/$", views.review_dataset, name="dataset"),
    re_path(BATCH + r"retrain/$", views.review_retrain, name="retrain"),
]
