"""The request bodies of the saved-search API (literature/api.py) as the OpenAPI schema shows
them, drawn from the form the views check them with."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample
from rest_framework import serializers

from core.apidocs import form_request_body
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
