"""The request bodies and list rows of screening's API views (screening/api.py,
screening/*_api.py) as the OpenAPI schema shows them. They describe; the views check with the
forms and services."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, inline_serializer
from rest_framework import serializers

from core.apidocs import FilePart, form_request_body, paged_rows
from screening.forms import SessionForm, SimulationForm
from screening.models import VALUES, Stage

_LABELS = serializers.ListField(
    child=serializers.CharField(), help_text="The labels to screen for (a list, or one "
    "comma-separated text); a labelled dataset's own labels only")
_REASONS = serializers.DictField(
    child=serializers.CharField(), required=False,
    help_text="label -> one of the session's exclusion reasons, for a label answered no")
_NOTE = serializers.CharField(required=False, allow_blank=True, max_length=2000)

SESSION_CREATE = form_request_body(
    name="ScreeningSessionCreateRequest", form_class=SessionForm,
    overrides={"labels": _LABELS,
               "batch": serializers.UUIDField(required=False, allow_null=True,
                                              help_text="Or a finished batch's id")})

SIMULATION_CREATE = form_request_body(name="ScreeningSimulationCreateRequest",
                                      form_class=SimulationForm)

DECIDE = inline_serializer("ScreeningDecisionRequest", fields={
    "record": serializers.IntegerField(help_text="The record's id"),
    "values": serializers.DictField(child=serializers.ChoiceField(choices=list(VALUES)),
                                    help_text="label -> yes, no or unsure, for every label"),
    "reasons": _REASONS,
    "note": _NOTE,
})

CONFLICT_RESOLVE = inline_serializer("ScreeningResolutionRequest", fields={
    "record": serializers.IntegerField(help_text="The record's id"),
    "label": serializers.CharField(),
    "value": serializers.ChoiceField(choices=["yes", "no"]),
    "stage": serializers.ChoiceField(choices=Stage.values, required=False,
                                     default=Stage.TITLE_ABSTRACT),
    "exclusion_reason": serializers.CharField(
        required=False, allow_blank=True,
        help_text="Required for a no at full text: one of the session's reasons"),
    "note": _NOTE,
    "replaces": serializers.IntegerField(
        required=False, help_text="The id of the resolution this one replaces: without it, "
        "a conflict already resolved answers 409 with that resolution"),
    "confirm_discard_fulltext": serializers.BooleanField(
        required=False, default=False, help_text="Resolve although the record leaves full "
        "text after work there (kept, marked superseded); needs `reason`"),
    "reason": serializers.CharField(
        required=False, allow_blank=True,
        help_text="Why the full-text work is left behind (logged, kept on the resolution)"),
})

FULLTEXT_ATTACH = {"multipart/form-data": inline_serializer("FullTextReportUpload", fields={
    "file": FilePart(help_text="The report's PDF"),
})}

FULLTEXT_DECIDE = inline_serializer("FullTextDecisionRequest", fields={
    "values": serializers.DictField(child=serializers.ChoiceField(choices=["yes", "no"]),
                                    help_text="label -> yes or no"),
    "reasons": _REASONS,
    "note": _NOTE,
})

NOT_RETRIEVED = inline_serializer("FullTextNotRetrievedRequest", fields={
    "reason": serializers.CharField(help_text="Why the report could not be retrieved"),
})

# Each example is a whole request on its own, with a fresh install's ids (the demo dataset is
# 1); tests/test_api_docs_examples_are_valid_requests.py sends each with its own rows' ids.

SESSION_CREATE_EXAMPLES = [
    OpenApiExample(
        "Dual screening of a dataset", request_only=True,
        value={"name": "Oncology screen", "dataset": 1, "labels": ["oncological"],
               "reviewers_per_record": 2},
        description="A labelled dataset is screened for its own labels only; an unlabelled "
        "one (or a batch, by `batch`) for any label you name.",
    ),
]

SIMULATION_CREATE_EXAMPLES = [
    OpenApiExample("Replay a labelled dataset", request_only=True,
                   value={"dataset": 1, "label": "oncological", "seeds": 3}),
]

DECIDE_EXAMPLES = [
    OpenApiExample("Include", request_only=True,
                   value={"record": 1, "values": {"oncological": "yes"}, "note": "RCT"}),
]

CONFLICT_RESOLVE_EXAMPLES = [
    OpenApiExample("Resolve as included", request_only=True,
                   value={"record": 1, "label": "oncological", "value": "yes",
                          "note": "Adults only, as the protocol asks"}),
]

FULLTEXT_DECIDE_EXAMPLES = [
    OpenApiExample("Include at full text", request_only=True,
                   value={"values": {"oncological": "yes"}}),
]

NOT_RETRIEVED_EXAMPLES = [
    OpenApiExample("Not retrievable", request_only=True,
                   value={"reason": "Not held by the library; the authors did not answer"}),
]

# The rows of the paged lists (core.apidocs.paged_rows): the views build them by hand.
_ID = serializers.IntegerField()

SESSION_ROWS = paged_rows(name="ScreeningSessionRow", keys={
    "id": _ID, "name": serializers.CharField(), "project": _ID,
    "labels": serializers.ListField(child=serializers.CharField()),
    "phase": serializers.CharField()})

SIMULATION_ROWS = paged_rows(name="ScreeningSimulationRow", keys={
    "id": _ID, "dataset": _ID, "label": serializers.CharField(),
    "state": serializers.CharField(), "error": serializers.CharField(),
    "recall_target": serializers.FloatField(), "confidence": serializers.FloatField(),
    "seeds": _ID, "every": _ID, "patience": _ID, "created_at": serializers.DateTimeField(),
    "url": serializers.CharField()})

CONFLICT_ROWS = paged_rows(name="ScreeningConflictRow", keys={
    "record": "The record: id, row, title, abstract, identifiers, authors, year, journal, "
              "source_url",
    "record_id": _ID, "label": serializers.CharField(),
    "decisions": "Each reviewer's decision in full"})

FULLTEXT_ROWS = paged_rows(name="FullTextRow", keys={
    "record": _ID, "labels": serializers.ListField(child=serializers.CharField()),
    "title": serializers.CharField(), "status": serializers.CharField(),
    "state": "The record's state, where its outcome is in your sight (else null)",
    "final": "label -> the final full-text answer, where in your sight (else null)"})

RECORD_ROWS = paged_rows(name="ScreeningRecordRow", keys={
    "id": _ID, "row": _ID, "ext_id": serializers.CharField(),
    "title": serializers.CharField(), "tags": "The record's tags you may see",
    "decisions": "The decisions you may see: reviewer, label, value",
    "final": "label -> final answer, where in your sight (else null)",
    "state": "The record's state, where its outcome is in your sight (else null)"})

PRIOR_ROWS = paged_rows(name="ScreeningPriorRow", keys={
    "id": _ID, "record": _ID, "position": _ID, "title": serializers.CharField(),
    "label": serializers.CharField(), "value": serializers.CharField(),
    "how": serializers.CharField(), "by": serializers.CharField(),
    "at": serializers.DateTimeField(), "shown": serializers.CharField()})
