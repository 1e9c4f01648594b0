"""The request bodies of the saved-search API (literature/api.py) as the OpenAPI schema shows
them, drawn from the form the views check them with."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample
from rest_framework import serializers

from core.apidocs import form_request_body, paged_rows
from literature.forms import SavedSearchForm

_PROJECT = {"project": serializers.IntegerField(
    required=False, help_text="The project to save it in; your current one when left out")}

SEARCH_CREATE = form_request_body(name="SavedSearchCreateRequest", form_class=SavedSearchForm,
                                  extra=_PROJECT)
SEARCH_CHANGE = form_request_body(name="SavedSearchChangeRequest", form_class=SavedSearchForm,
                                  partial=True)

SEARCH_CREATE_EXAMPLES = [
    OpenApiExample(
        "A weekly search", request_only=True,
        value={"name": "Telomeres in pancreatic cancer",
               "query": "pancreatic cancer[tiab] AND telomere*", "schedule": "weekly"},
        description="Its first run makes a new collection; `project`: your current one when "
        "left out.",
    ),
]

SEARCH_CHANGE_EXAMPLES = [
    OpenApiExample("Stop the schedule", request_only=True, value={"schedule": "off"}),
]

# The rows of the paged lists (core.apidocs.paged_rows): the views build them by hand.
_ID = serializers.IntegerField()
_TEXT = serializers.CharField()
_WHEN = serializers.DateTimeField()

RUN_KEYS = {
    "id": _ID, "search": _ID, "status": _TEXT, "status_display": _TEXT, "trigger": _TEXT,
    "query": _TEXT, "found": _ID, "new": _ID, "imported": _ID, "dataset": _ID,
    "batch": _TEXT, "digest": "The run's digest", "predicted_counts": "label -> predicted yes",
    "reason": _TEXT, "emailed_to": "Who the digest went to", "requests": _ID,
    "created_at": _WHEN, "finished_at": _WHEN, "is_active": serializers.BooleanField(),
    "url": _TEXT}

RUN_ROWS = paged_rows(name="SearchRunRow", keys=RUN_KEYS)

SEARCH_ROWS = paged_rows(name="SavedSearchRow", keys={
    "id": _ID, "project": _ID, "name": _TEXT, "query": _TEXT, "mindate": _TEXT,
    "maxdate": _TEXT, "collection": _ID, "ml_model": _ID, "schedule": _TEXT,
    "last_run_at": _WHEN, "next_run_at": _WHEN, "last_status": _TEXT, "reason": _TEXT,
    "latest_run": "The latest run, as in the runs' list (null before the first)",
    "url": _TEXT})
