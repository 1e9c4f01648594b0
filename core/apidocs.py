"""Request bodies for the OpenAPI schema, drawn from the Django forms that check them, and the
rows of the paged lists.

Several API views bind the page's form to the JSON body, so the form is the one truth of what
the body holds; documenting it by hand would drift. These serializers only describe: the views
validate with the forms.
"""

from __future__ import annotations

from typing import Any

from django import forms
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field, inline_serializer
from rest_framework import serializers


@extend_schema_field(OpenApiTypes.BINARY)
class FilePart(serializers.FileField):
    """A file part of a multipart body (binary, so /api/docs/ offers a file picker)."""


def _bounds(field: forms.Field) -> dict[str, Any]:
    found = {}
    for name in ("min_value", "max_value"):
        if getattr(field, name, None) is not None:
            found[name] = getattr(field, name)
    return found


def _described(field: forms.Field, *, partial: bool) -> serializers.Field:
    common: dict[str, Any] = {"help_text": str(field.help_text or "")}
    if partial:
        common.update(required=False, allow_null=not field.required)
    elif field.initial is not None:
        # The API views fill what the body leaves out with the form's initial values.
        common["default"] = field.initial
    elif field.required:
        common["required"] = True
    else:
        common.update(required=False, allow_null=True)
    if isinstance(field, forms.ModelChoiceField):  # an id; `overrides` name a UUID's
        return serializers.IntegerField(**common)
    if isinstance(field, forms.ChoiceField):
        return serializers.ChoiceField(choices=[c for c in field.choices if c[0] != ""],
                                       **common)
    if isinstance(field, forms.FloatField):  # before IntegerField, which it subclasses
        return serializers.FloatField(**_bounds(field), **common)
    if isinstance(field, forms.IntegerField):
        return serializers.IntegerField(**_bounds(field), **common)
    if isinstance(field, forms.DateField):
        return serializers.DateField(**common)
    if isinstance(field, forms.BooleanField):
        return serializers.BooleanField(**common)
    return serializers.CharField(max_length=getattr(field, "max_length", None), **common)


def form_request_body(*, name: str, form_class: type[forms.Form],
                      overrides: dict[str, serializers.Field] | None = None,
                      extra: dict[str, serializers.Field] | None = None,
                      partial: bool = False) -> serializers.Serializer:
    """The JSON body a form checks, as a named schema component.

    A key with an initial value in the form is optional and defaults to it, as the views
    read it. `overrides` replace a form field's description (a list the view joins, say);
    `extra` adds the body's keys the form does not hold; both are used as given. `partial`
    (a PATCH: the fields given change) makes each of the form's keys optional.
    """
    fields: dict[str, serializers.Field] = {
        key: _described(field, partial=partial)
        for key, field in form_class.base_fields.items()}
    fields.update(overrides or {})
    fields.update(extra or {})
    return inline_serializer(name, fields=fields)


def paged_rows(*, name: str, keys: dict[str, serializers.Field | str]) -> serializers.Serializer:
    """A list's rows for the schema: on a GenericAPIView drf-spectacular wraps them in the
    pager's `{count, next, previous, results}` and adds `?page=`, as the view answers. A key
    given as text is documented as any JSON value, with the text as its help."""
    fields = {key: serializers.JSONField(help_text=field) if isinstance(field, str) else field
              for key, field in keys.items()}
    return inline_serializer(name, fields=fields, many=True)
